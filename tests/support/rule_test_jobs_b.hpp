#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/mode.hpp"
#include "pipeline/tensor_value.hpp"
#include "pipeline/trial.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

// Small jobs written tensor by tensor for the rule tests of ClassImbalance, Confusion,
// FeatureImportanceOverweight, TreeDepth, Overfit, Overtraining and SimilarAcrossRuns.
namespace rulestream::testing {

using Steps = std::vector<std::int64_t>;

struct SavedTensor {
  std::string name;
  TensorValue value;
};

// One step of a job: its mode and what it saves. Global steps count 0, 1, 2, ... in the order
// given; mode steps count within each mode.
struct JobStep {
  Mode mode = Mode::Train;
  std::vector<SavedTensor> tensors;
};

// Writes a finished one-worker job under `root` with the collections smdebug's hooks declare
// for these tensors (losses; XGBoost's labels, predictions, feature_importance, trees) and
// opens it as a complete trial.
Trial write_job(const std::filesystem::path& root, const std::vector<JobStep>& steps);

// Steps that each save one scalar loss `tensor`, in the given modes and values.
std::vector<JobStep> loss_steps(const std::vector<std::pair<Mode, double>>& losses,
                                const std::string& tensor = "CrossEntropyLoss_output_0");

// A TRAIN step saving `labels` (class ids as floats, as XGBoost's hook saves them) and
// `predictions`.
JobStep classified(const std::vector<double>& labels, const TensorValue& predictions);

TensorValue scalar(double value);                       // float64, shape ()
TensorValue floats(const std::vector<double>& values);  // float64, shape (n,)
TensorValue float_rows(std::int64_t rows, const std::vector<double>& values);  // (rows, n/rows)
TensorValue ints(const std::vector<std::int64_t>& values);                     // int64, shape (n,)

// Builds the built-in `rule` on `trial` (and `others`) from string parameters.
std::unique_ptr<Rule> make_rule(std::string_view rule, const Trial& trial,
                                const RuleParameters& parameters = {},
                                const std::vector<Trial>& others = {});

// The global steps at which the rule fires over the whole job (invoke_rule).
Steps fired(std::string_view rule, const Trial& trial, const RuleParameters& parameters = {},
            const std::vector<Trial>& others = {});

// The message of the RuleConfigError that building the rule throws ("" when it builds).
std::string config_error(std::string_view rule, const Trial& trial,
                         const RuleParameters& parameters, const std::vector<Trial>& others = {});

}  // namespace rulestream::testing
