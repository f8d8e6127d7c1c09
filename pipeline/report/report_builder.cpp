#include "pipeline/report/report_builder.hpp"

#include "pipeline/graph/configuration_check.hpp"
#include "pipeline/graph/rule_pipeline.hpp"
#include "pipeline/graph/tensorboard_pipeline.hpp"
#include "pipeline/report/job_summary.hpp"
#include "pipeline/report/rule_firings.hpp"
#include "pipeline/report/smdebug_charts.hpp"
#include "pipeline/report/tensorboard_charts.hpp"
#include "sources/open/storage_factory.hpp"
#include "stages/tensorboard/logdir_reader.hpp"

namespace rulestream {
namespace {

JobReport smdebug_report(PipelineConfig config) {
  FiringRecorder recorder;
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(recorder.sink());
  RulePipeline pipeline(std::move(config), std::move(sinks));
  const PipelineReport replay = pipeline.run();
  const Trial trial = pipeline.base_trial();

  JobReport report;
  report.job = summarize_trial(trial);
  if (!replay.source_failure.empty()) {
    report.job.problems.push_back("reading the job failed: " + replay.source_failure);
  }
  for (const auto& problem : replay.problems) report.job.problems.push_back(problem.message);
  report.rules = recorder.outcomes(replay.statuses);
  report.charts = smdebug_charts(trial, recorder.all_firing_steps());
  return report;
}

JobReport tensorboard_report(PipelineConfig config, const Storage& storage) {
  SeriesNaming naming = SeriesNaming::defaults();
  for (const auto& [key, patterns] : config.tensorboard_names) naming.replace(key, patterns);
  const std::string path = config.paths.front();
  FiringRecorder recorder;
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(recorder.sink());
  TensorBoardPipeline pipeline(std::move(config), std::move(sinks), naming);
  const TensorBoardReport replay = pipeline.run();

  // The plots read the logdir once more, whole: the pipeline hands rules each value once and
  // keeps none of them.
  TensorBoardSeriesCollector collector;
  const LogdirRead read = read_logdir(storage, collector);

  JobReport report;
  report.job.path = path;
  report.job.format = "TensorBoard";
  report.job.workers = read.runs;
  collector.summarize(naming, report.job);
  if (!replay.source_failure.empty()) {
    report.job.problems.push_back("reading the logdir failed: " + replay.source_failure);
  }
  for (const auto& problem : read.problems) report.job.problems.push_back(problem.message);
  report.rules = recorder.outcomes(replay.statuses);
  report.charts = collector.charts(naming, recorder.all_firing_steps());
  return report;
}

}  // namespace

std::vector<RuleConfig> default_report_rules(TrialFormat format) {
  const std::vector<std::string> names =
      format == TrialFormat::TensorBoard
          ? std::vector<std::string>{"NonFinite", "LossSpike", "LossNotDecreasing"}
          : std::vector<std::string>{"VanishingGradient", "ExplodingTensor", "LossNotDecreasing",
                                     "AllZero"};
  std::vector<RuleConfig> rules;
  for (const auto& name : names) rules.push_back({.configuration_name = name, .rule = name});
  return rules;
}

JobReport build_job_report(PipelineConfig config) {
  const auto storage = open_storage(config.paths.front(), config.storage);
  const TrialFormat format = require_known_format(*storage);
  if (config.rules.empty()) config.rules = default_report_rules(format);
  config.follow = false;
  config.progress = false;
  config.sinks.clear();
  config.default_stop_actions.clear();
  for (RuleConfig& rule : config.rules) {
    rule.stop_actions.clear();
    rule.notify_sinks.clear();
  }
  check_configuration(config);
  JobReport report = format == TrialFormat::TensorBoard ? tensorboard_report(config, *storage)
                                                        : smdebug_report(config);
  report.generated = std::chrono::system_clock::now();
  return report;
}

}  // namespace rulestream
