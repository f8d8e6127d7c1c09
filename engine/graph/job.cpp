#include "engine/graph/job.hpp"

#include "engine/graph/rule_pipeline.hpp"
#include "engine/graph/tensorboard_pipeline.hpp"

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

// A TensorBoard logdir: its runs' series fed to the series rules (TensorBoardPipeline).
class TensorBoardJob final : public Job {
 public:
  TensorBoardJob(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                 const RuleRegistry& registry)
      : pipeline_(std::move(config), std::move(sinks), SeriesNaming::defaults(), registry) {}

  JobOutcome run() override { return static_cast<JobOutcome>(pipeline_.run()); }
  void request_stop() override { pipeline_.request_stop(); }
  const JobProgress& progress() const override { return pipeline_.progress(); }
  void on_notice(std::function<void(const std::string&)> notice) override {
    pipeline_.on_notice(std::move(notice));
  }
  TrialFormat format() const override { return TrialFormat::TensorBoard; }

 private:
  TensorBoardPipeline pipeline_;
};

}  // namespace

std::unique_ptr<Job> open_job(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                              TrialFormat format, const RuleRegistry& registry) {
  if (format == TrialFormat::TensorBoard) {
    return std::make_unique<TensorBoardJob>(std::move(config), std::move(sinks), registry);
  }
  return std::make_unique<SmdebugJob>(std::move(config), std::move(sinks), registry);
}

}  // namespace rulestream
