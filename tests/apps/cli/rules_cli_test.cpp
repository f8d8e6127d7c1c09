// `rulestream rules`: the built-in rules with their parameters and defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "apps/cli/cli.hpp"
#include "rules/default_rules.hpp"
#include "rules/rule_registry.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using Outcome = testing::CliOutcome;

Outcome rules(std::vector<std::string> args) {
  return testing::run_cli("rules", std::move(args));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line that starts (after indentation) with `parameter`, or "".
std::string parameter_line(const std::vector<std::string>& lines, std::size_t from,
                           const std::string& parameter) {
  for (std::size_t i = from; i < lines.size(); ++i) {
    if (i > from && !lines[i].starts_with(" ")) break;  // the next rule
    if (lines[i].starts_with("  " + parameter + " ")) return lines[i];
  }
  return {};
}

void expect_parameter(const std::vector<std::string>& lines, std::size_t rule_line,
                      const std::string& parameter, const std::string& type,
                      const std::string& default_value) {
  const std::string line = parameter_line(lines, rule_line, parameter);
  ASSERT_FALSE(line.empty()) << parameter << " not listed under " << lines[rule_line];
  EXPECT_NE(line.find(" " + type + " "), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with("default " + default_value)) << line;
}

std::size_t line_starting(const std::vector<std::string>& lines, const std::string& start) {
  const auto it = std::find_if(lines.begin(), lines.end(),
                               [&](const std::string& line) { return line.starts_with(start); });
  return static_cast<std::size_t>(it - lines.begin());
}

TEST(RulesCli, ListsTheBuiltInRulesWithParametersAndDefaults) {
  const Outcome outcome = rules({});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  EXPECT_TRUE(outcome.err.empty()) << outcome.err;
  const auto lines = lines_of(outcome.out);

  // Rules sit at the left margin, sorted, each with its snake_case alias.
  std::vector<std::string> rule_lines;
  for (const auto& line : lines) {
    if (!line.starts_with(" ")) rule_lines.push_back(line);
  }
  EXPECT_EQ(rule_lines, (std::vector<std::string>{
                            "AllZero (also all_zero)",
                            "CheckInputImages (also check_input_images)",
                            "ClassImbalance (also class_imbalance)",
                            "Confusion (also confusion)",
                            "DeadRelu (also dead_relu)",
                            "Divergence (also divergence)",
                            "ExplodingTensor (also exploding_tensor)",
                            "FeatureImportanceOverweight (also feature_importance_overweight)",
                            "GradNormSpike (also grad_norm_spike)",
                            "GradientExplosion (also gradient_explosion)",
                            "GradientVanishing (also gradient_vanishing)",
                            "LossNotDecreasing (also loss_not_decreasing)",
                            "LossSpike (also loss_spike)",
                            "MaxInitializationTime (also max_initialization_time)",
                            "NLPSequenceRatio (also nlp_sequence_ratio)",
                            "NonFinite (also non_finite)",
                            "Overfit (also overfit)",
                            "OverfittingTrend (also overfitting_trend)",
                            "Overtraining (also overtraining)",
                            "Plateau (also plateau)",
                            "PoorWeightInitialization (also poor_weight_initialization)",
                            "SaturatedActivation (also saturated_activation)",
                            "SimilarAcrossRuns (also similar_across_runs)",
                            "StalledTrainingRule (also stalled_training_rule)",
                            "StepOutlier (also step_outlier)",
                            "TensorVariance (also tensor_variance)",
                            "TreeDepth (also tree_depth)",
                            "UnchangedTensor (also unchanged_tensor)",
                            "VanishingGradient (also vanishing_gradient)",
                            "WeightUpdateRatio (also weight_update_ratio)"}));
  expect_parameter(lines, line_starting(lines, "Confusion"), "category_no", "int", "None");
  expect_parameter(lines, line_starting(lines, "SimilarAcrossRuns"), "other_trial", "string",
                   "(none)");

  const std::size_t vanishing = line_starting(lines, "VanishingGradient");
  expect_parameter(lines, vanishing, "threshold", "float", "0.0000001");
  const std::size_t exploding = line_starting(lines, "ExplodingTensor");
  expect_parameter(lines, exploding, "only_nan", "bool", "False");
  expect_parameter(lines, exploding, "collection_names", "list", "(none)");
  expect_parameter(lines, exploding, "tensor_regex", "regex list", "(none)");
  const std::size_t all_zero = line_starting(lines, "AllZero");
  expect_parameter(lines, all_zero, "threshold", "float", "100");
  const std::size_t dead_relu = line_starting(lines, "DeadRelu");
  expect_parameter(lines, dead_relu, "tensor_regex", "regex list", ".*relu_output");
  expect_parameter(lines, dead_relu, "threshold_layer", "float", "50.0");
  const std::size_t variance = line_starting(lines, "TensorVariance");
  expect_parameter(lines, variance, "max_threshold", "float", "(none)");
  const std::size_t unchanged = line_starting(lines, "UnchangedTensor");
  expect_parameter(lines, unchanged, "num_steps", "int", "3");
  expect_parameter(lines, unchanged, "atol", "float", "1e-08");
  const std::size_t loss = line_starting(lines, "LossNotDecreasing");
  expect_parameter(lines, loss, "num_steps", "int", "10");
  expect_parameter(lines, loss, "diff_percent", "float", "0.1");
  expect_parameter(lines, loss, "increase_threshold_percent", "float", "5");
  expect_parameter(lines, loss, "use_losses_collection", "bool", "True");
  expect_parameter(lines, loss, "mode", "string", "GLOBAL");
  // The short listing leaves the descriptions to 'rules NAME'.
  EXPECT_EQ(outcome.out.find("fires when"), std::string::npos) << outcome.out;
}

// Every parameter a rule's factory knows is listed, so the listing cannot drift from the code.
TEST(RulesCli, ListsEveryRegisteredParameter) {
  const Outcome outcome = rules({});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk);
  const auto lines = lines_of(outcome.out);
  for (const RuleSpec* spec : RuleRegistry::builtin().all()) {
    const std::size_t at = line_starting(lines, spec->name + " ");
    ASSERT_LT(at, lines.size()) << spec->name;
    for (const auto& parameter : spec->parameters) {
      EXPECT_FALSE(parameter_line(lines, at, parameter.name).empty())
          << spec->name << " " << parameter.name;
    }
  }
}

TEST(RulesCli, DescribesOneRuleByNameOrAlias) {
  const Outcome by_name = rules({"VanishingGradient"});
  ASSERT_EQ(by_name.exit_code, cli::kExitOk) << by_name.err;
  EXPECT_TRUE(by_name.err.empty());
  const auto lines = lines_of(by_name.out);
  ASSERT_GE(lines.size(), 3u) << by_name.out;
  EXPECT_EQ(lines[0], "VanishingGradient (also vanishing_gradient)");
  EXPECT_NE(lines[1].find("mean absolute value"), std::string::npos) << lines[1];
  expect_parameter(lines, 0, "threshold", "float", "0.0000001");
  EXPECT_NE(by_name.out.find("fires when a gradient's mean absolute value is below this"),
            std::string::npos)
      << by_name.out;
  // Only this rule.
  EXPECT_EQ(by_name.out.find("ExplodingTensor"), std::string::npos) << by_name.out;

  EXPECT_EQ(rules({"vanishing_gradient"}).out, by_name.out);
  EXPECT_EQ(rules({"vanishinggradient"}).out, by_name.out);

  const Outcome loss = rules({"loss_not_decreasing"});
  ASSERT_EQ(loss.exit_code, cli::kExitOk);
  EXPECT_TRUE(loss.out.starts_with("LossNotDecreasing (also loss_not_decreasing)\n")) << loss.out;
  EXPECT_NE(loss.out.find("num_steps"), std::string::npos);
}

TEST(RulesCli, AnUnknownRuleIsAnError) {
  const Outcome outcome = rules({"VanishingGradients2"});
  EXPECT_EQ(outcome.exit_code, cli::kExitError);
  EXPECT_TRUE(outcome.out.empty()) << outcome.out;
  EXPECT_EQ(outcome.err, "rulestream rules: unknown rule 'VanishingGradients2'\n");

  const Outcome two = rules({"AllZero", "ExplodingTensor"});
  EXPECT_EQ(two.exit_code, cli::kExitError);
  EXPECT_TRUE(two.out.empty());
  EXPECT_NE(two.err.find("at most one rule name"), std::string::npos) << two.err;
}

TEST(RulesCli, Help) {
  const Outcome outcome = rules({"--help"});
  EXPECT_EQ(outcome.exit_code, cli::kExitOk);
  EXPECT_TRUE(outcome.out.starts_with("rulestream rules [NAME | --defaults]")) << outcome.out;
}

TEST(RulesCli, DefaultsDescribesTheDefaultSet) {
  const Outcome outcome = rules({"--defaults"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto lines = lines_of(outcome.out);
  std::vector<std::string> rule_lines;
  for (const auto& line : lines) {
    if (!line.empty() && !line.starts_with(" ") && line.find("(also") != std::string::npos) {
      rule_lines.push_back(line.substr(0, line.find(" (also")));
    }
  }
  EXPECT_EQ(rule_lines, default_rule_names());
  EXPECT_NE(outcome.out.find("NotApplicable"), std::string::npos) << outcome.out;
}

TEST(RulesCli, BinaryListsTheRules) {
  const auto binary = "'" + testing::rulestream_binary().string() + "'";
  const auto listed = testing::run_command(binary + " rules");
  ASSERT_EQ(listed.exit_code, cli::kExitOk) << listed.err;
  EXPECT_EQ(listed.out, rules({}).out);
  const auto unknown = testing::run_command(binary + " rules Nope");
  EXPECT_EQ(unknown.exit_code, cli::kExitError);
  EXPECT_TRUE(unknown.out.empty());
  EXPECT_EQ(unknown.err, "rulestream rules: unknown rule 'Nope'\n");
}

}  // namespace
}  // namespace rulestream
