// Runs the built-in rules and the example CustomGradientRule over the real smdebug trials and
// compares every step's outcome with what smdebug's invoke_rule did
// (smdebug-samples/expected/<trial>.rules.json).

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/model/exceptions.hpp"
#include "examples/custom_gradient_rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/sagemaker/loss_not_decreasing_rule.hpp"
#include "tests/support/reference_counts.hpp"
#include "tests/support/rule_outcomes.hpp"
#include "tests/support/smdebug_expected.hpp"
#include "tests/support/smdebug_rules_expected.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;
using testing::ExpectedRuleRun;
using testing::SampleTrial;

// --- the <Rule>AllWorkers variants: the same checks over every worker that saved a tensor ----

using WorkerCheck =
    std::function<bool(const Tensor&, std::int64_t step, const std::string& worker)>;

class AllWorkersRule final : public Rule {
 public:
  AllWorkersRule(Trial trial, std::string name, std::optional<std::string> collection,
                 WorkerCheck check)
      : Rule(std::move(trial)),
        name_(std::move(name)),
        collection_(std::move(collection)),
        check_(std::move(check)) {}

  std::string_view name() const override { return name_; }

  bool invoke_at_step(std::int64_t step) override {
    // Gradient rules read every gradient (a missing one skips the step, as smdebug raises);
    // value rules read the tensors saved at the step.
    const auto names = collection_ ? base_trial().tensor_names({.collection = *collection_})
                                   : base_trial().tensor_names({.step = step});
    for (const std::string& name : names) {
      const Tensor tensor = base_trial().tensor(name);
      for (const std::string& worker : tensor.workers(step)) {
        if (check_(tensor, step, worker)) return true;
      }
    }
    return false;
  }

 private:
  std::string name_;
  std::optional<std::string> collection_;
  WorkerCheck check_;
};

double abs_mean(const Tensor& tensor, std::int64_t step, const std::string& worker) {
  return tensor.reduction_value(step, Reduction::Mean, Mode::Global, worker, true).as_double();
}

// The value at a step, or nullopt when only reductions were saved.
std::optional<TensorValue> raw_value(const Tensor& tensor, std::int64_t step,
                                     const std::string& worker) {
  try {
    return tensor.value(step, Mode::Global, worker);
  } catch (const TensorUnavailableForStep&) {
    return std::nullopt;
  }
}

// --- building the rule an expected run describes ---------------------------------------------

std::string parameter_text(const json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  if (value.is_bool()) return value.get_bool() ? "True" : "False";
  if (value.is_int64()) return std::to_string(value.get_int64());
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value.as_double());
  return buffer;
}

double threshold_of(const ExpectedRuleRun& run) {
  return testing::json_double(testing::member(run.params, "threshold", run.rule), run.rule);
}

// Built-ins through the registry, from string parameters as a user would configure them.
std::unique_ptr<Rule> make_rule(const ExpectedRuleRun& run, const Trial& trial) {
  const RuleContext context{trial, {}};
  RuleParameters parameters;
  if (run.rule == "VanishingGradientRule" || run.rule == "ExplodingTensor" ||
      run.rule == "AllZero") {
    for (const auto& [key, value] : run.params) parameters[key] = parameter_text(value);
    const std::string name = run.rule == "VanishingGradientRule" ? "VanishingGradient" : run.rule;
    return RuleRegistry::builtin().create(name, context, parameters);
  }
  if (run.rule == "LossNotDecreasing") {
    for (const auto& [key, value] : run.params) {
      if (key == "collection") {
        // The reference read the collection "losses": our use_losses_collection.
        if (!value.is_string() || value.get_string() != "losses") {
          throw std::runtime_error("unexpected collection " + json::serialize(value));
        }
        parameters["use_losses_collection"] = "True";
      } else {
        parameters[key] = parameter_text(value);
      }
    }
    return RuleRegistry::builtin().create("LossNotDecreasing", context, parameters);
  }
  if (run.rule == "CustomGradientRule") {
    return std::make_unique<example::CustomGradientRule>(trial, threshold_of(run));
  }
  if (run.rule == "VanishingGradientRuleAllWorkers") {
    const double threshold = threshold_of(run);
    return std::make_unique<AllWorkersRule>(
        trial, run.rule, "gradients",
        [threshold](const Tensor& t, std::int64_t step, const std::string& worker) {
          return abs_mean(t, step, worker) < threshold;
        });
  }
  if (run.rule == "CustomGradientRuleAllWorkers") {
    const double threshold = threshold_of(run);
    return std::make_unique<AllWorkersRule>(
        trial, run.rule, "gradients",
        [threshold](const Tensor& t, std::int64_t step, const std::string& worker) {
          return abs_mean(t, step, worker) > threshold;
        });
  }
  if (run.rule == "ExplodingTensorAllWorkers") {
    return std::make_unique<AllWorkersRule>(
        trial, run.rule, std::nullopt,
        [](const Tensor& t, std::int64_t step, const std::string& worker) {
          const auto value = raw_value(t, step, worker);
          const auto count = value ? testing::count_non_finite(*value) : std::nullopt;
          return count && count->nan + count->inf > 0;
        });
  }
  if (run.rule == "AllZeroAllWorkers") {
    const double threshold = threshold_of(run);
    return std::make_unique<AllWorkersRule>(
        trial, run.rule, std::nullopt,
        [threshold](const Tensor& t, std::int64_t step, const std::string& worker) {
          const auto value = raw_value(t, step, worker);
          const auto zeros = value ? testing::count_zeros(*value) : std::nullopt;
          return zeros && value->size() > 0 &&
                 static_cast<double>(*zeros) * 100.0 / static_cast<double>(value->size()) >=
                     threshold;
        });
  }
  return nullptr;
}

// --- the suite --------------------------------------------------------------------------------

class SmdebugRulesSampleTest : public ::testing::TestWithParam<SampleTrial> {
 protected:
  void SetUp() override {
    if (GetParam().name.empty()) {
      GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES or place them in "
                      "../shared/smdebug-samples): rule conformance not checked";
    }
    expected_file_ = GetParam().expected_file.parent_path() / (GetParam().name + ".rules.json");
    if (!std::filesystem::exists(expected_file_)) {
      GTEST_SKIP() << "trial " << GetParam().name << " has no " << expected_file_.string();
    }
  }
  std::filesystem::path expected_file_;
};

TEST_P(SmdebugRulesSampleTest, EveryStepMatchesSmdebugsInvokeRule) {
  const Trial trial = Trial::open(GetParam().trial_dir.string());
  const auto runs = testing::load_expected_rule_runs(expected_file_);
  ASSERT_FALSE(runs.empty());
  for (const ExpectedRuleRun& run : runs) {
    SCOPED_TRACE(GetParam().name + ": " + run.describe());
    ASSERT_NE(make_rule(run, trial), nullptr) << "no rulestream rule for " << run.rule;

    // Step by step, recording what each step did, as the reference's wrapper did.
    const auto recording = make_rule(run, trial);
    const auto recorded = testing::run_recording_outcomes(*recording, run.start_step, run.end_step);
    EXPECT_EQ(recorded.per_step_outcome, run.per_step_outcome);
    EXPECT_EQ(recorded.triggered_steps, run.triggered_steps);
    if (!run.end_step) {
      EXPECT_EQ(recorded.ended_with, run.ended_with);
    }

    // And through invoke_rule itself.
    const auto rule = make_rule(run, trial);
    const InvokeResult result = invoke_rule(*rule, run.start_step, run.end_step);
    EXPECT_EQ(result.triggered_steps, run.triggered_steps);
    std::int64_t evaluated = 0;
    for (const auto& [step, outcome] : run.per_step_outcome) {
      evaluated += outcome == "True" || outcome == "False" ? 1 : 0;
    }
    EXPECT_EQ(result.steps_evaluated, evaluated);

    if (const auto* loss = dynamic_cast<const LossNotDecreasingRule*>(rule.get())) {
      ASSERT_EQ(loss->comparisons().size(), run.comparisons.size());
      for (std::size_t i = 0; i < run.comparisons.size(); ++i) {
        const auto& want = run.comparisons[i];
        const auto& got = loss->comparisons()[i];
        SCOPED_TRACE("comparison " + std::to_string(i) + " at step " + std::to_string(want.step));
        EXPECT_EQ(got.tensor, want.tensor);
        EXPECT_EQ(got.step, want.step);
        EXPECT_EQ(got.base_step, want.base_step);
        EXPECT_TRUE(got.loss == want.loss || (std::isnan(got.loss) && std::isnan(want.loss)))
            << got.loss << " vs " << want.loss;
        EXPECT_TRUE(got.base_loss == want.base_loss ||
                    (std::isnan(got.base_loss) && std::isnan(want.base_loss)))
            << got.base_loss << " vs " << want.base_loss;
        EXPECT_EQ(got.triggered, want.triggered);
      }
    } else {
      EXPECT_TRUE(run.comparisons.empty());
    }

    // A rule that fired says why: the finding of its last firing names tensors and figures.
    if (!result.triggered_steps.empty() && run.rule.find("AllWorkers") == std::string::npos &&
        run.rule != "CustomGradientRule") {
      const auto last = make_rule(run, trial);
      EXPECT_THROW(last->invoke(result.triggered_steps.back()), RuleEvaluationConditionMet);
      EXPECT_FALSE(last->last_finding().tensors.empty());
      EXPECT_FALSE(last->last_finding().figures.empty());
      EXPECT_FALSE(last->last_finding().message.empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SmdebugRulesSampleTest,
                         ::testing::ValuesIn(testing::sample_trials_or_placeholder()),
                         [](const ::testing::TestParamInfo<SampleTrial>& param_info) {
                           return testing::sample_test_name(param_info.param);
                         });

TEST(SmdebugRulesExpectedTest, PythonNonFiniteLiteralsAreQuoted) {
  EXPECT_EQ(testing::quote_non_finite_literals(
                R"({"a": NaN, "b": [Infinity, -Infinity], "NaN": "x NaN \" Infinity"})"),
            R"({"a": "NaN", "b": ["Infinity", "-Infinity"], "NaN": "x NaN \" Infinity"})");
}

}  // namespace
}  // namespace rulestream
