#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/tensor_value.hpp"
#include "trial/api/trial.hpp"

// Jobs written as a series of steps numbered in order, with the collections smdebug's hooks
// declare, for the rule tests of ClassImbalance, Confusion, FeatureImportanceOverweight,
// TreeDepth, Overfit, Overtraining and SimilarAcrossRuns. Building and running rules:
// tests/support/rule_test_jobs.hpp.
namespace rulestream::testing {

using Steps = std::vector<std::int64_t>;

struct SavedTensor {
  std::string name;
  TensorValue value;
};

// One step of a job: its mode and what it saves. Global steps count 0, 1, 2, ... in the order
// given; mode steps count within each mode.
struct SeriesStep {
  Mode mode = Mode::Train;
  std::vector<SavedTensor> tensors;
};

// Writes a finished one-worker job under `root` with the collections smdebug's hooks declare
// for these tensors (losses; XGBoost's labels, predictions, feature_importance, trees) and
// opens it as a complete trial.
Trial write_job(const std::filesystem::path& root, const std::vector<SeriesStep>& steps);

// Steps that each save one scalar loss `tensor`, in the given modes and values.
std::vector<SeriesStep> loss_steps(const std::vector<std::pair<Mode, double>>& losses,
                                   const std::string& tensor = "CrossEntropyLoss_output_0");

// A TRAIN step saving `labels` (class ids as floats, as XGBoost's hook saves them) and
// `predictions`.
SeriesStep classified(const std::vector<double>& labels, const TensorValue& predictions);

TensorValue scalar(double value);                       // float64, shape ()
TensorValue floats(const std::vector<double>& values);  // float64, shape (n,)
TensorValue float_rows(std::int64_t rows, const std::vector<double>& values);  // (rows, n/rows)
TensorValue ints(const std::vector<std::int64_t>& values);                     // int64, shape (n,)

}  // namespace rulestream::testing
