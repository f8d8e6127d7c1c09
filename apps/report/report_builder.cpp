#include "apps/report/report_builder.hpp"

#include "apps/report/format_sections.hpp"
#include "apps/report/rule_firings.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/job.hpp"
#include "engine/graph/rules_file.hpp"
#include "sources/open/storage_factory.hpp"

namespace rulestream {

JobReport build_job_report(PipelineConfig config) {
  const auto storage = open_storage(config.paths.front(), config.storage);
  const TrialFormat format = require_known_format(*storage);
  if (config.rules.empty()) config.rules = default_rules_for(format);
  config.follow = false;
  config.progress = false;
  config.keep_series = true;  // the charts are drawn from what the replay read
  config.sinks.clear();
  config.default_stop_actions.clear();
  for (RuleConfig& rule : config.rules) {
    rule.stop_actions.clear();
    rule.notify_sinks.clear();
  }
  check_configuration(config);

  FiringRecorder recorder;
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(recorder.sink());
  const std::unique_ptr<Job> job = open_job(config, std::move(sinks), format);
  const JobOutcome replay = job->run();

  JobReport report;
  add_format_sections(*job, config, *storage, recorder.all_firing_steps(), report);
  if (!replay.source_failure.empty()) {
    report.job.problems.push_back("reading the job failed: " + replay.source_failure);
  }
  for (const auto& problem : replay.problems) report.job.problems.push_back(problem.message);
  report.rules = recorder.outcomes(replay.statuses);
  report.verdicts = recorder.verdicts();
  report.generated = std::chrono::system_clock::now();
  return report;
}

}  // namespace rulestream
