#include "engine/graph/job.hpp"

#include "engine/graph/rule_pipeline.hpp"
#include "engine/graph/rules_file.hpp"
#include "engine/graph/series_pipeline.hpp"
#include "stages/metrics/metrics_runs.hpp"

namespace rulestream {
namespace {

// An smdebug trial: the streaming graph of DESIGN.md (RulePipeline).
class SmdebugJob final : public Job {
 public:
  SmdebugJob(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
             const RuleRegistry& registry)
      : pipeline_(std::move(config), std::move(sinks), registry) {}

  JobOutcome run() override { return static_cast<JobOutcome>(pipeline_.run()); }
  void request_stop() override { pipeline_.request_stop(); }
  const JobProgress& progress() const override { return pipeline_.progress(); }
  // Its problems are said as they happen (on stderr) and listed in the report.
  void on_notice(std::function<void(const std::string&)>) override {}
  TrialFormat format() const override { return TrialFormat::Smdebug; }
  std::optional<Trial> trial() const override { return pipeline_.base_trial(); }

 private:
  RulePipeline pipeline_;
};

// A job of a series format (a TensorBoard logdir, a folder of text metrics): its runs' series
// fed to the series rules (SeriesPipeline).
class SeriesJob final : public Job {
 public:
  SeriesJob(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
            const RuleRegistry& registry, TrialFormat format)
      : format_(format),
        store_(config.keep_series ? std::make_unique<SeriesStore>() : nullptr),
        pipeline_(std::move(config), std::move(sinks), SeriesNaming::defaults(), registry,
                  series_format_of(format)) {
    if (store_) pipeline_.keep_series(*store_);
  }

  JobOutcome run() override { return static_cast<JobOutcome>(pipeline_.run()); }
  void request_stop() override { pipeline_.request_stop(); }
  const JobProgress& progress() const override { return pipeline_.progress(); }
  void on_notice(std::function<void(const std::string&)> notice) override {
    pipeline_.on_notice(std::move(notice));
  }
  TrialFormat format() const override { return format_; }
  const SeriesStore* series() const override { return store_.get(); }

 private:
  TrialFormat format_;
  std::unique_ptr<SeriesStore> store_;  // before the pipeline, which feeds it
  SeriesPipeline pipeline_;
};

}  // namespace

const SeriesFormat& series_format_of(TrialFormat format) {
  return format == TrialFormat::TextMetrics ? text_metrics_series_format()
                                            : tensorboard_series_format();
}

std::vector<RuleConfig> default_rules_for(TrialFormat format) {
  if (format != TrialFormat::Smdebug) return default_rule_configs();
  std::vector<RuleConfig> rules;
  for (const std::string name :
       {"VanishingGradient", "ExplodingTensor", "LossNotDecreasing", "AllZero"}) {
    rules.push_back({.configuration_name = name, .rule = name});
  }
  return rules;
}

std::unique_ptr<Job> open_job(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                              TrialFormat format, const RuleRegistry& registry) {
  if (format != TrialFormat::Smdebug) {
    return std::make_unique<SeriesJob>(std::move(config), std::move(sinks), registry, format);
  }
  return std::make_unique<SmdebugJob>(std::move(config), std::move(sinks), registry);
}

}  // namespace rulestream
