#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/collection.hpp"
#include "core/model/mode.hpp"
#include "core/model/tensor_value.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "stages/format/trial_writer.hpp"
#include "trial/api/trial.hpp"

namespace rulestream::testing {

// Small hand-made jobs for the built-in rule tests: exactly the tensors a test needs, with
// values chosen so the steps where a rule fires can be worked out by hand.

TensorValue float_tensor(Shape shape, std::vector<float> values);
TensorValue int_tensor(Shape shape, std::vector<std::int64_t> values);  // int64, as token ids
// `count` copies of `value` in a tensor of `shape` (count = the shape's elements).
TensorValue filled(Shape shape, float value);

// One saved step: its global number, mode, and the tensors saved there.
struct JobStep {
  std::int64_t step = 0;
  Mode mode = Mode::Train;
  std::vector<std::pair<std::string, TensorValue>> tensors;
};

// A collection of the job, matching tensors by include_regex.
Collection collection(std::string name, std::vector<std::string> include_regex);

// Starts a two-worker job under `root` of which only worker_0 will write: both workers'
// collections files (a `gradients` collection, "^gradient"), and worker_0's writer, for tests of
// a silent worker and of the grace that releases its steps.
std::unique_ptr<TrialWriter> start_two_worker_job(const std::filesystem::path& root);

// Writes a one-worker smdebug trial under `root` (steps in order, mode steps counted within
// each mode, the collections, the end marker) and opens it, complete.
Trial write_job(const std::filesystem::path& root, const std::vector<JobStep>& steps,
                const std::vector<Collection>& collections = {});

// Sets the modification time of each step's index file (of `worker`): step s's to
// start + offsets[s] seconds, as if the job had written them then (what a replay reads as the
// steps' arrival times).
void stamp_index_files(const std::filesystem::path& root,
                       std::chrono::system_clock::time_point start,
                       const std::vector<std::int64_t>& offsets_seconds,
                       const std::string& worker = "worker_0");

// Spoils the record of `tensor` saved at `step` (of `worker`), found through the step's index
// file: its length field is changed, so framing it fails its checksum and reading the tensor
// there throws FormatError naming the file and offset. The step's other records still read.
void corrupt_saved_record(const std::filesystem::path& root, std::int64_t step,
                          const std::string& tensor, const std::string& worker = "worker_0");

// A built-in rule by name over `trial` (and `others`, for rules that compare runs).
std::unique_ptr<Rule> make_rule(std::string_view rule, const Trial& trial,
                                const RuleParameters& parameters = {},
                                const std::vector<Trial>& others = {});

// The global steps at which the built-in rule fires over the whole job (invoke_rule).
std::vector<std::int64_t> fired_steps(std::string_view rule, const Trial& trial,
                                      const RuleParameters& parameters = {},
                                      const std::vector<Trial>& others = {});

// What invoking `rule` did at each step from `first` to `last`, in turn on the one rule (so its
// state carries from step to step) and going on past errors, as a caller of smdebug's API may:
// "fired: <its finding's tensors>", "quiet", "skipped" (nothing to evaluate there) or
// "error: <the message>".
std::vector<std::string> step_outcomes(Rule& rule, std::int64_t first, std::int64_t last);

// The finding of the built-in rule at `step`, which must fire there (a test failure otherwise).
Finding finding_at(std::string_view rule, const Trial& trial, std::int64_t step,
                   const RuleParameters& parameters = {});

// The message of the RuleConfigError creating the rule throws, "" when it builds. Built over
// an empty job: configuration errors come before any data is read.
std::string config_error(std::string_view rule, const RuleParameters& parameters);
// The same over the given trials (for rules whose configuration names another trial).
std::string config_error(std::string_view rule, const Trial& trial,
                         const RuleParameters& parameters, const std::vector<Trial>& others = {});

}  // namespace rulestream::testing
