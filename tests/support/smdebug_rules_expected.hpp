#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream::testing {

// One comparison LossNotDecreasing made, as smdebug-samples' reference logged it.
struct ExpectedComparison {
  std::string tensor;
  std::int64_t step = 0;
  std::int64_t base_step = 0;
  double loss = 0.0;
  double base_loss = 0.0;
  bool triggered = false;
};

// One entry of expected/<trial>.rules.json (smdebug-samples README): a rule run under smdebug's
// invoke_rule, with what happened at every step.
struct ExpectedRuleRun {
  std::string rule;  // "VanishingGradientRule", "AllZeroAllWorkers", ...
  boost::json::object params;
  std::int64_t start_step = 0;
  std::optional<std::int64_t> end_step;
  std::string ended_with;  // "NoMoreData"
  std::vector<std::int64_t> triggered_steps;
  // "True", "False", or the exception class that ended the step ("StepUnavailable", ...).
  std::map<std::int64_t, std::string> per_step_outcome;
  std::vector<ExpectedComparison> comparisons;  // LossNotDecreasing only

  // "VanishingGradientRule threshold=1e-07", for failure messages.
  std::string describe() const;
};

// Reads expected/<trial>.rules.json. Throws std::runtime_error naming the file and the key when
// it does not have the documented shape.
std::vector<ExpectedRuleRun> load_expected_rule_runs(const std::filesystem::path& file);

// Python's json module writes NaN, Infinity and -Infinity bare, which Boost.JSON rejects; this
// quotes them (outside strings) into the spellings json_double() reads.
std::string quote_non_finite_literals(std::string_view python_json);

}  // namespace rulestream::testing
