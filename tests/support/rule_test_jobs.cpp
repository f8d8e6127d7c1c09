#include "tests/support/rule_test_jobs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/collections_file.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {

TensorValue float_tensor(Shape shape, std::vector<float> values) {
  return TensorValue::from_values(DType::Float32, std::move(shape), values);
}

TensorValue int_tensor(Shape shape, std::vector<std::int64_t> values) {
  return TensorValue::from_values(DType::Int64, std::move(shape), values);
}

TensorValue filled(Shape shape, float value) {
  const auto count = static_cast<std::size_t>(element_count(shape));
  return float_tensor(std::move(shape), std::vector<float>(count, value));
}

Collection collection(std::string name, std::vector<std::string> include_regex) {
  Collection made;
  made.name = std::move(name);
  made.include_regex = std::move(include_regex);
  return made;
}

std::unique_ptr<TrialWriter> start_two_worker_job(const std::filesystem::path& root) {
  CollectionsFile collections;
  collections.num_workers = 2;
  collections.collections["gradients"] = collection("gradients", {"^gradient"});
  auto writer =
      std::make_unique<TrialWriter>(TrialWriter::Options{.root = root, .worker = "worker_0"});
  writer->write_collections(collections);
  TrialWriter({.root = root, .worker = "worker_1"}).write_collections(collections);
  return writer;
}

Trial write_job(const std::filesystem::path& root, const std::vector<JobStep>& steps,
                const std::vector<Collection>& collections) {
  TrialWriter writer({.root = root});
  std::map<Mode, std::int64_t> mode_steps;
  for (const JobStep& step : steps) {
    writer.begin_step(step.step, step.mode, mode_steps[step.mode]++);
    for (const auto& [name, value] : step.tensors) writer.add_tensor(name, value);
    writer.end_step();
  }
  CollectionsFile file;
  for (const Collection& each : collections) file.collections[each.name] = each;
  file.num_workers = 1;
  writer.write_collections(file);
  writer.write_end_marker();
  return Trial::open(root.string(), {.end_of_job_grace = std::chrono::milliseconds{0}});
}

void stamp_index_files(const std::filesystem::path& root,
                       std::chrono::system_clock::time_point start,
                       const std::vector<std::int64_t>& offsets_seconds,
                       const std::string& worker) {
  for (std::size_t s = 0; s < offsets_seconds.size(); ++s) {
    std::filesystem::last_write_time(
        root / index_file_path(static_cast<std::int64_t>(s), worker),
        std::chrono::file_clock::from_sys(start + std::chrono::seconds(offsets_seconds[s])));
  }
}

void corrupt_saved_record(const std::filesystem::path& root, std::int64_t step,
                          const std::string& tensor, const std::string& worker) {
  const std::filesystem::path index_path = root / index_file_path(step, worker);
  std::ifstream index_stream(index_path, std::ios::binary);
  std::stringstream json;
  json << index_stream.rdbuf();
  const IndexFile index = parse_index_file(json.str(), index_path.string());
  const auto location =
      std::find_if(index.tensors.begin(), index.tensors.end(),
                   [&](const TensorLocation& each) { return each.tensor_name == tensor; });
  ASSERT_NE(location, index.tensors.end()) << tensor << " is not saved at step " << step;
  ASSERT_TRUE(index.event_file_name.has_value());
  std::fstream event_file(root / *index.event_file_name,
                          std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(event_file.is_open()) << *index.event_file_name;
  event_file.seekp(static_cast<std::streamoff>(location->start) + 2);
  event_file.put('\x7f');  // inside the record's length, which its header checksum covers
  ASSERT_TRUE(event_file.good());
}

std::unique_ptr<Rule> make_rule(std::string_view rule, const Trial& trial,
                                const RuleParameters& parameters,
                                const std::vector<Trial>& others) {
  return RuleRegistry::builtin().create(rule, {trial, others}, parameters);
}

std::vector<std::int64_t> fired_steps(std::string_view rule, const Trial& trial,
                                      const RuleParameters& parameters,
                                      const std::vector<Trial>& others) {
  const auto built = make_rule(rule, trial, parameters, others);
  return invoke_rule(*built).triggered_steps;
}

std::vector<std::string> step_outcomes(Rule& rule, std::int64_t first, std::int64_t last) {
  std::vector<std::string> outcomes;
  for (std::int64_t step = first; step <= last; ++step) {
    try {
      rule.invoke(step);
      outcomes.emplace_back("quiet");
    } catch (const RuleEvaluationConditionMet&) {
      std::string fired = "fired:";
      for (const std::string& tensor : rule.last_finding().tensors) fired += " " + tensor;
      outcomes.push_back(std::move(fired));
    } catch (const TensorUnavailableForStep&) {
      outcomes.emplace_back("skipped");
    } catch (const StepUnavailable&) {
      outcomes.emplace_back("skipped");
    } catch (const std::exception& error) {
      outcomes.push_back(std::string("error: ") + error.what());
    }
  }
  return outcomes;
}

Finding finding_at(std::string_view rule, const Trial& trial, std::int64_t step,
                   const RuleParameters& parameters) {
  // Evaluated from the job's first step, so rules that keep state see what came before.
  const auto built = make_rule(rule, trial, parameters);
  for (std::int64_t earlier = 0; earlier < step; ++earlier) {
    try {
      built->invoke(earlier);
    } catch (const RulestreamError&) {
      // Condition met or nothing saved there: the finding wanted is the one at `step`.
    }
  }
  try {
    built->invoke(step);
  } catch (const RuleEvaluationConditionMet&) {
    return built->last_finding();
  }
  ADD_FAILURE() << rule << " did not fire at step " << step;
  return {};
}

std::string config_error(std::string_view rule, const RuleParameters& parameters) {
  const TempDir dir;
  const Trial trial = write_job(dir.path(), {{.step = 0, .tensors = {{"x", filled({1}, 1.0f)}}}});
  return config_error(rule, trial, parameters);
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
