// Numbers read as Python's float() and json.loads read them (the values below are what Python 3
// gives for each text).

#include "stages/metrics/text_numbers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rulestream {
namespace {

TEST(PythonFloat, ReadsWhatFloatReads) {
  EXPECT_EQ(parse_python_float("1.5"), 1.5);
  EXPECT_EQ(parse_python_float("  -2.25 "), -2.25);  // float(" -2.25 ")
  EXPECT_EQ(parse_python_float("+3"), 3.0);
  EXPECT_EQ(parse_python_float("1e-3"), 0.001);
  EXPECT_EQ(parse_python_float("1E3"), 1000.0);
  EXPECT_EQ(parse_python_float(".5"), 0.5);
  EXPECT_EQ(parse_python_float("5."), 5.0);
  EXPECT_EQ(parse_python_float("0.1"), 0.1);  // the nearest double, as Python's repr round-trips
  EXPECT_EQ(parse_python_float("inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_python_float("-Infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_python_float("INF"), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*parse_python_float("nan")));
  EXPECT_TRUE(std::isnan(*parse_python_float("NaN")));
  EXPECT_TRUE(std::isnan(*parse_python_float("-nan")));
  // float("1e999") is inf, float("1e-999") is 0.0, float("-1e999") is -inf.
  EXPECT_EQ(parse_python_float("1e999"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_python_float("-1e999"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_python_float("1e-999"), 0.0);
}

TEST(PythonFloat, RefusesWhatIsNoNumber) {
  for (const char* text : {"", "  ", "abc", "1,5", "1.2.3", "1e", "e5", "--1", "+-1", "0x10",
                           "nan(1)", "infinit", "1_000", "tensor(0.5)", "True", "."}) {
    EXPECT_FALSE(parse_python_float(text).has_value()) << text;
  }
}

TEST(IntegralStep, TakesWholeNumbersOnly) {
  EXPECT_EQ(integral_step(3.0), 3);
  EXPECT_EQ(integral_step(-2.0), -2);
  EXPECT_EQ(integral_step(300.0), 300);
  EXPECT_FALSE(integral_step(2.5).has_value());
  EXPECT_FALSE(integral_step(std::numeric_limits<double>::quiet_NaN()).has_value());
  EXPECT_FALSE(integral_step(std::numeric_limits<double>::infinity()).has_value());
  EXPECT_FALSE(integral_step(1e19).has_value());  // past int64
  EXPECT_EQ(integral_step(9007199254740992.0), 9007199254740992);
}

TEST(StripSpaces, StripsWhatStrStripStrips) {
  EXPECT_EQ(strip_spaces(" \t a b \r\n"), "a b");
  EXPECT_EQ(strip_spaces("   "), "");
}

}  // namespace
}  // namespace rulestream
