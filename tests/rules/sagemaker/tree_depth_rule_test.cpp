// TreeDepth on tree dumps named as smdebug's XGBoost hook saves them (trees/Tree, trees/Node).
#include <gtest/gtest.h>

#include <numeric>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::ints;
using testing::scalar;
using testing::SeriesStep;
using testing::Steps;
using testing::TempDir;

std::vector<std::int64_t> node_ids(std::int64_t largest) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(largest + 1));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

SeriesStep one_tree(std::int64_t largest_node) {
  const auto nodes = node_ids(largest_node);
  return {Mode::Train,
          {{"trees/Tree", ints(std::vector<std::int64_t>(nodes.size(), 0))},
           {"trees/Node", ints(nodes)},
           {"train-rmse", scalar(0.5)}}};
}

// Depth = log2(largest node id). Step 0: 30 -> 4.91; step 1: 14 -> 3.81; step 2: 16 -> 4;
// step 3 saved no tree; step 4 holds two trees, 0 (largest node 20 -> 4.39) and 1 (2 -> 1).
Trial write_trees(const TempDir& dir) {
  SeriesStep two_trees;
  std::vector<std::int64_t> trees(21, 0);
  std::vector<std::int64_t> nodes = node_ids(20);
  for (std::int64_t node = 0; node <= 2; ++node) {
    trees.push_back(1);
    nodes.push_back(node);
  }
  two_trees.tensors = {{"trees/Tree", ints(trees)}, {"trees/Node", ints(nodes)}};
  return testing::write_job(dir.path() / "xgb",
                            {one_tree(30), one_tree(14), one_tree(16),
                             SeriesStep{Mode::Train, {{"train-rmse", scalar(0.4)}}}, two_trees});
}

TEST(TreeDepthRule, FiresAtStepsWithATreeShallowerThanTheDepth) {
  TempDir dir;
  const Trial trial = write_trees(dir);
  EXPECT_EQ(testing::fired_steps("TreeDepth", trial), (Steps{1, 4}));
  EXPECT_EQ(testing::fired_steps("tree_depth", trial, {{"depth", "5"}}), (Steps{0, 1, 2, 4}));

  const auto rule = testing::make_rule("TreeDepth", trial);
  EXPECT_THROW(rule->invoke(1), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().tensors, std::vector<std::string>{"trees/Node"});
  ASSERT_EQ(rule->last_finding().figures.size(), 4u);
  EXPECT_EQ(rule->last_finding().figures[1], (Figure{"largest_node_id", 14, "trees/Node"}));
  EXPECT_NEAR(rule->last_finding().figures[2].value, 3.807354922, 1e-9);
  EXPECT_EQ(rule->last_finding().figures[3], (Figure{"threshold", 4, std::nullopt}));
  EXPECT_EQ(rule->last_finding().message,
            "tree 0 has depth 3.80735 (log2 of its largest node id 14) < expected depth 4");

  EXPECT_THROW(rule->invoke(4), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().message,
            "tree 1 has depth 1 (log2 of its largest node id 2) < expected depth 4");
}

TEST(TreeDepthRule, StaysQuietWhenEveryTreeIsDeepEnoughAndSkipsStepsWithoutTrees) {
  TempDir dir;
  const Trial trial = write_trees(dir);
  const auto rule = testing::make_rule("TreeDepth", trial, {{"depth", "1"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 4) << "step 3 saved no tree";
}

TEST(TreeDepthRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_trees(dir);
  EXPECT_EQ(testing::config_error("TreeDepth", trial, {{"depth", "-1"}}),
            "rule TreeDepth: parameter depth: \"-1\" must not be negative");
  EXPECT_EQ(testing::config_error("TreeDepth", trial, {{"depth", "deep"}}),
            "rule TreeDepth: parameter depth: \"deep\" is not a number");
}

}  // namespace
}  // namespace rulestream
