// NLPSequenceRatio on hand-made token-id batches: the share of padding (0) and other tokens.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::int_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

constexpr const char* kInput = "embedding0_input_0";

// Two sequences of five token ids per step.
//   step 0: 5 of 10 tokens are 0 (50%: not more than 50), none is 1
//   step 1: 7 of 10 are 0 (70%)
//   step 2: 1 is 0, 3 are 1 (30%)
//   step 3: 2 are 0, 7 are 1 (70%)
Trial job(const TempDir& dir) {
  const std::vector<std::vector<std::int64_t>> batches = {{5, 6, 7, 0, 0, 8, 9, 0, 0, 0},
                                                          {5, 0, 0, 0, 0, 8, 9, 0, 0, 0},
                                                          {5, 6, 7, 8, 0, 8, 9, 1, 1, 1},
                                                          {1, 1, 1, 1, 0, 1, 1, 1, 9, 0}};
  std::vector<testing::JobStep> steps;
  for (std::size_t step = 0; step < batches.size(); ++step) {
    steps.push_back({.step = static_cast<std::int64_t>(step),
                     .tensors = {{kInput, int_tensor({2, 5}, batches[step])},
                                 {"labels", int_tensor({2}, {0, 0})}}});
  }
  return testing::write_job(dir.path(), steps);
}

TEST(NlpSequenceRatioRule, FiresWhenATokensShareExceedsItsThreshold) {
  TempDir dir;
  const Trial trial = job(dir);
  EXPECT_EQ(testing::fired_steps("NLPSequenceRatio", trial), (Steps{1}));
  EXPECT_EQ(
      testing::fired_steps("nlp_sequence_ratio", trial,
                           {{"token_values", "0, 1"}, {"token_thresholds_percent", "50, 25"}}),
      (Steps{1, 2, 3}));
  EXPECT_EQ(testing::fired_steps("NLPSequenceRatio", trial,
                                 {{"token_values", "1"}, {"token_thresholds_percent", "50"}}),
            (Steps{3}));
  EXPECT_EQ(testing::fired_steps("NLPSequenceRatio", trial, {{"token_thresholds_percent", "40"}}),
            (Steps{0, 1}));
  // The all-zero labels are no input sequence unless selected.
  EXPECT_EQ(testing::fired_steps("NLPSequenceRatio", trial, {{"tensor_regex", "labels"}}),
            (Steps{0, 1, 2, 3}));

  const Finding finding = testing::finding_at("NLPSequenceRatio", trial, 1);
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{kInput}));
  EXPECT_EQ(finding.figures,
            (std::vector<Figure>{{"token_0_percent", 70.0, kInput},
                                 {"token_0_percent_threshold", 50.0, std::nullopt}}));
  EXPECT_EQ(finding.message, "embedding0_input_0 token 0 is 70% (7 of 10 tokens) > threshold 50%");
}

TEST(NlpSequenceRatioRule, StaysQuietOnSequencesWithLittlePadding) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 4; ++step) {
    steps.push_back(
        {.step = step, .tensors = {{kInput, int_tensor({2, 4}, {4, 5, 6, 0, 7, 8, 0, 0})}}});
  }
  const Trial trial = testing::write_job(dir.path(), steps);
  const auto rule = testing::make_rule("NLPSequenceRatio", trial);
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 4);
}

TEST(NlpSequenceRatioRule, RejectsBadParametersNamingThem) {
  EXPECT_EQ(testing::config_error("NLPSequenceRatio",
                                  {{"token_values", "0, 3"}, {"token_thresholds_percent", "50"}}),
            "rule NLPSequenceRatio: parameter token_thresholds_percent: \"50\" has 1 thresholds "
            "for 2 token_values: give one per token");
  EXPECT_EQ(testing::config_error("NLPSequenceRatio", {{"token_values", "0, pad"}}),
            "rule NLPSequenceRatio: parameter token_values: \"0, pad\" is not a comma-separated "
            "list of numbers (\"pad\")");
  EXPECT_EQ(testing::config_error("NLPSequenceRatio", {{"token_thresholds_percent", "150"}}),
            "rule NLPSequenceRatio: parameter token_thresholds_percent: \"150\" is not a list of "
            "percentages (0-100)");
  EXPECT_EQ(testing::config_error("NLPSequenceRatio", {{"tensor_regex", ".*embedding0_input_0"},
                                                       {"token_values", "3, 0"},
                                                       {"token_thresholds_percent", "50.0, 50.0"}}),
            "");
}

}  // namespace
}  // namespace rulestream
