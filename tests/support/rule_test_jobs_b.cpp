#include "tests/support/rule_test_jobs_b.hpp"

#include <chrono>
#include <map>

#include "stages/collections_file.hpp"
#include "stages/trial_writer.hpp"

namespace rulestream::testing {
namespace {

Collection collection(const std::string& name, const std::string& include_regex) {
  Collection made;
  made.name = name;
  made.include_regex = {include_regex};
  return made;
}

CollectionsFile job_collections() {
  CollectionsFile file;
  for (Collection each : {collection("losses", "[Ll]oss"), collection("labels", "^labels$"),
                          collection("predictions", "^predictions$"),
                          collection("feature_importance", "^feature_importance/.*"),
                          collection("trees", "^trees/.*"), collection("weights", "weight$")}) {
    file.collections[each.name] = each;
  }
  file.num_workers = 1;
  return file;
}

}  // namespace

Trial write_job(const std::filesystem::path& root, const std::vector<JobStep>& steps) {
  TrialWriter writer({.root = root});
  std::map<Mode, std::int64_t> mode_steps;
  for (std::size_t global = 0; global < steps.size(); ++global) {
    const JobStep& step = steps[global];
    writer.begin_step(static_cast<std::int64_t>(global), step.mode, mode_steps[step.mode]++);
    for (const SavedTensor& tensor : step.tensors) writer.add_tensor(tensor.name, tensor.value);
    writer.end_step();
  }
  writer.write_collections(job_collections());
  writer.write_end_marker();
  return Trial::open(root.string(), {.end_of_job_grace = std::chrono::milliseconds{0}});
}

std::vector<JobStep> loss_steps(const std::vector<std::pair<Mode, double>>& losses,
                                const std::string& tensor) {
  std::vector<JobStep> steps;
  for (const auto& [mode, loss] : losses) steps.push_back({mode, {{tensor, scalar(loss)}}});
  return steps;
}

JobStep classified(const std::vector<double>& labels, const TensorValue& predictions) {
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

std::unique_ptr<Rule> make_rule(std::string_view rule, const Trial& trial,
                                const RuleParameters& parameters,
                                const std::vector<Trial>& others) {
  return RuleRegistry::builtin().create(rule, {trial, others}, parameters);
}

Steps fired(std::string_view rule, const Trial& trial, const RuleParameters& parameters,
            const std::vector<Trial>& others) {
  const auto built = make_rule(rule, trial, parameters, others);
  return invoke_rule(*built).triggered_steps;
}

std::string config_error(std::string_view rule, const Trial& trial,
                         const RuleParameters& parameters, const std::vector<Trial>& others) {
  try {
    make_rule(rule, trial, parameters, others);
  } catch (const RuleConfigError& error) {
    return error.what();
  }
  return "";
}

}  // namespace rulestream::testing
