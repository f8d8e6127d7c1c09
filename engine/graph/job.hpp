#pragma once

// One job, whatever its format: what commands (watch, replay, report) and the service run. The
// format is detected once, by whoever finds the job (trial_presence.hpp), and open_job builds
// the format's pipeline behind this one interface; everything after it (the summary, the exit
// status, the service's statuses and metrics, the report's rule table) reads one progress type,
// one report type and one problem type.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/job_outcome.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/trial_presence.hpp"
#include "rules/rule_registry.hpp"
#include "sinks/sink.hpp"
#include "stages/series/series_format.hpp"
#include "stages/series/series_store.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

class Job {
 public:
  virtual ~Job() = default;

  // Reads the job (a replay to its end; a watch to its end marker, or until request_stop),
  // evaluates its rules, sends every rule's status to the sinks and flushes them. Call once,
  // from one thread. Input and storage failures end in the report (source_failure, problems,
  // statuses in Error), never in an exception.
  virtual JobOutcome run() = 0;

  // From any thread, before or during run(): stop reading, judge what was read, report.
  virtual void request_stop() = 0;

  // How far the reading has got; any thread, for as long as the job lives.
  virtual const JobProgress& progress() const = 0;

  // Where the job says, while it runs, what a person watching should know (a rule with nothing
  // to judge yet, a listing that failed and will be retried). Before run(); called from the
  // job's threads.
  virtual void on_notice(std::function<void(const std::string&)> notice) = 0;

  virtual TrialFormat format() const = 0;

  // The smdebug-style trial the rules read, for what needs its steps and tensors (the report's
  // charts, the service's event times); nullopt for a format rules read as series only.
  virtual std::optional<Trial> trial() const { return std::nullopt; }

  // The series a job of a series format read, kept as TensorBoard shows them, when it was
  // opened with config.keep_series; null otherwise, and for an smdebug trial. Complete once
  // run() has returned.
  virtual const SeriesStore* series() const { return nullptr; }
};

// The loader stage and file filter of a series format (TensorBoard, TextMetrics; smdebug is no
// series format: TensorBoard's is returned for it).
const SeriesFormat& series_format_of(TrialFormat format);

// What a job of `format` is judged by when no rule is named (report, serve): a logdir's or text
// metrics' default set (default_rule_configs, `rulestream rules --defaults`), or for an smdebug
// trial smdebug's usual four (VanishingGradient, ExplodingTensor, LossNotDecreasing, AllZero).
std::vector<RuleConfig> default_rules_for(TrialFormat format);

// Builds the pipeline of `format` over config.paths (RuleConfigError for a bad configuration;
// StorageError for an smdebug path that is no trial folder). Nothing is read yet.
std::unique_ptr<Job> open_job(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                              TrialFormat format,
                              const RuleRegistry& registry = RuleRegistry::builtin());

}  // namespace rulestream
