#include "rules/support/rule_text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

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

TEST(RuleTextTest, FiguresReadAsPrintfWritesThem) {
  // format_figure uses std::to_chars, which the standard defines as printf's "%g": check it on
  // values of every magnitude, including the ones where %g switches between fixed and
  // scientific notation and where rounding carries into a new digit.
  std::vector<double> values{
      0.0, -0.0,     1e-5, 9.999995e-5, 1e-4,   0.0001234565,          999999.5,
      1e6, 123456.5, 1e15, -2.5e-300,   5e-324, 1.7976931348623157e308};
  std::uint64_t bits = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 20000; ++i) {
    bits = bits * 6364136223846793005ULL + 1442695040888963407ULL;
    double value = 0.0;
    std::memcpy(&value, &bits, sizeof value);
    if (std::isfinite(value)) values.push_back(value);
  }
  for (const double value : values) {
    char expected[64];
    std::snprintf(expected, sizeof expected, "%g", value);
    ASSERT_EQ(format_figure(value), expected) << value;
  }
}

}  // namespace
}  // namespace rulestream
