#include "tests/support/series_jobs.hpp"

#include "tests/support/rule_test_jobs.hpp"

namespace rulestream::testing {
namespace {

// The collections smdebug's hooks declare for the tensors these jobs save.
std::vector<Collection> hook_collections() {
  return {collection("losses", {"[Ll]oss"}),
          collection("labels", {"^labels$"}),
          collection("predictions", {"^predictions$"}),
          collection("feature_importance", {"^feature_importance/.*"}),
          collection("trees", {"^trees/.*"}),
          collection("weights", {"weight$"})};
}

}  // namespace

Trial write_job(const std::filesystem::path& root, const std::vector<SeriesStep>& steps) {
  std::vector<JobStep> numbered;
  for (std::size_t global = 0; global < steps.size(); ++global) {
    JobStep step{.step = static_cast<std::int64_t>(global), .mode = steps[global].mode};
    for (const SavedTensor& tensor : steps[global].tensors) {
      step.tensors.emplace_back(tensor.name, tensor.value);
    }
    numbered.push_back(std::move(step));
  }
  return write_job(root, numbered, hook_collections());
}

std::vector<SeriesStep> loss_steps(const std::vector<std::pair<Mode, double>>& losses,
                                   const std::string& tensor) {
  std::vector<SeriesStep> steps;
  for (const auto& [mode, loss] : losses) steps.push_back({mode, {{tensor, scalar(loss)}}});
  return steps;
}

SeriesStep classified(const std::vector<double>& labels, const TensorValue& predictions) {
  return {Mode::Train, {{"labels", floats(labels)}, {"predictions", predictions}}};
}

TensorValue scalar(double value) {
  return TensorValue::from_values(DType::Float64, {}, std::vector<double>{value});
}

TensorValue floats(const std::vector<double>& values) {
  return TensorValue::from_values(DType::Float64, {static_cast<std::int64_t>(values.size())},
                                  values);
}

TensorValue float_rows(std::int64_t rows, const std::vector<double>& values) {
  return TensorValue::from_values(DType::Float64,
                                  {rows, static_cast<std::int64_t>(values.size()) / rows}, values);
}

TensorValue ints(const std::vector<std::int64_t>& values) {
  return TensorValue::from_values(DType::Int64, {static_cast<std::int64_t>(values.size())}, values);
}

}  // namespace rulestream::testing
