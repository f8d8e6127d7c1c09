#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/storage_options.hpp"
#include "engine/graph/incident_policy.hpp"

namespace rulestream {

class InotifyHub;

// Stopping training when a rule fires (SageMaker's StopTraining action): a signal to a process,
// or a command run through /bin/sh. Exactly one of pid and command is set.
struct StopAction {
  std::optional<std::int64_t> pid;  // a positive process id
  int signal = 15;                  // SIGTERM
  std::string command;

  friend bool operator==(const StopAction&, const StopAction&) = default;
};

// One rule to run, in SageMaker's shape: {"RuleConfigurationName": "VG", "RuleParameters":
// {"rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}}, with what it does when it fires
// ("Actions", see rules_file.hpp).
struct RuleConfig {
  std::string configuration_name;                 // defaults to the rule's name
  std::string rule;                               // rule_to_invoke
  std::map<std::string, std::string> parameters;  // without rule_to_invoke
  // Run once, the first time the rule fires.
  std::vector<StopAction> stop_actions;
  // Sinks (by name) that get this rule's events besides the sinks no notify action names.
  std::vector<std::string> notify_sinks;
  // Run as one of the default set (rules/default_rules.hpp): where the data has none of its
  // inputs its status is NotApplicable, not Error.
  bool only_where_applicable = false;
  // How its firings group into incidents (a rules file's "Incidents"; IncidentBook).
  IncidentPolicy incidents;
};

// Where events go: "stdout" (text or json), "file" (path), "webhook" (url, slack payload).
struct SinkConfig {
  std::string name;  // what notify actions call it; defaults to the target ("stdout" for stdout)
  std::string type;
  std::string target;            // path or URL; empty for stdout
  bool json = false;             // stdout only
  bool slack = false;            // webhook only
  std::string dead_letter_path;  // webhook and alertmanager; default in the working directory
  // A plugin's sink type (sinks/sink_registry.hpp): what its factory is given. Alertmanager:
  // resend_interval (seconds), severity, generator_url, bearer_token_file.
  std::map<std::string, std::string> parameters;
};

struct PipelineConfig {
  std::vector<std::string> paths;  // the base trial first, then others (for rules that compare)
  bool follow = false;             // watch (true) or replay (false)
  StorageOptions storage;          // how to reach S3 (endpoint, timeouts, retries)
  // How often a live source looks again (S3: a poll; a local folder: the rescan safety net).
  std::chrono::milliseconds poll_interval{2000};
  // Set by whoever chose poll_interval (watch's --poll-interval, the service's own): a local
  // logdir followed with inotify is then rescanned at that poll, not at its own rare default.
  bool poll_interval_chosen = false;
  std::vector<RuleConfig> rules;
  std::vector<SinkConfig> sinks;
  // For a TensorBoard logdir: tag patterns replacing the defaults of a role or mode
  // (stages/series/series_naming.hpp: "loss", "gradient_norm", "learning_rate",
  // "gradient", "train", "eval"), from the rules file's "tensorboard" object.
  std::map<std::string, std::vector<std::string>> tensorboard_names;
  std::optional<std::int64_t> start_step;  // global steps [start, end)
  std::optional<std::int64_t> end_step;
  // Decoded values kept for rules that read them; reductions are kept for every step.
  std::size_t max_memory = std::size_t{512} << 20;
  // Release a step without its missing workers after this long (0: wait for all of them).
  std::chrono::milliseconds worker_grace{0};
  // After the end-of-job marker appears, files may still land for this long.
  std::chrono::milliseconds end_of_job_grace{1000};
  int threads = 0;  // 0: every core
  bool check_data_crc = true;
  bool progress = false;  // a progress line on stderr (replay on a terminal)
  // A job of a series format keeps every value it reads in a SeriesStore (Job::series), for
  // what shows them afterwards (the report), which then reads the job once. Its memory grows
  // with the job: for a replay, not for a watch that runs for days.
  bool keep_series = false;
  // Stop actions for rules that ask to stop training (stop_training_on_fire) and configure no
  // stop action of their own (--stop-pid, --stop-command).
  std::vector<StopAction> default_stop_actions;
  // A local trial followed by the service: its inotify watches go on this instance, shared by
  // every job (sources/local/inotify_hub.hpp; an instance per job would run out at Linux's
  // default of 128 per user). Null: the watcher opens an instance of its own.
  std::shared_ptr<InotifyHub> inotify_hub;
};

}  // namespace rulestream
