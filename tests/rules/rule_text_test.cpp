#include "rules/rule_text.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace rulestream {
namespace {

TEST(RuleTextTest, FormatsFiguresLikePrintfG) {
  EXPECT_EQ(format_figure(3.2e-10), "3.2e-10");
  EXPECT_EQ(format_figure(1e-7), "1e-07");
  EXPECT_EQ(format_figure(0.1), "0.1");
  EXPECT_EQ(format_figure(100.0), "100");
  EXPECT_EQ(format_figure(1.23456789), "1.23457");
  EXPECT_EQ(format_figure(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_figure(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(format_figure(-std::numeric_limits<double>::infinity()), "-Infinity");
}

TEST(RuleTextTest, NamesHowManyMoreTensorsAFindingHas) {
  Finding finding;
  EXPECT_EQ(more_tensors_suffix(finding), "");
  finding.tensors = {"a"};
  EXPECT_EQ(more_tensors_suffix(finding), "");
  finding.tensors = {"a", "b"};
  EXPECT_EQ(more_tensors_suffix(finding), " (and 1 more tensor)");
  finding.tensors.assign(kMaxReportedTensors, "t");
  EXPECT_EQ(more_tensors_suffix(finding),
            " (and at least " + std::to_string(kMaxReportedTensors - 1) + " more tensors)");
}

}  // namespace
}  // namespace rulestream
