#include "core/model/mode.hpp"

#include <gtest/gtest.h>

namespace rulestream {
namespace {

TEST(Mode, NamesRoundTrip) {
  for (const Mode mode : kAllModes) {
    EXPECT_EQ(mode_from_name(mode_name(mode)), mode);
  }
}

TEST(Mode, AcceptsPythonSpellings) {
  EXPECT_EQ(mode_from_name("train"), Mode::Train);
  EXPECT_EQ(mode_from_name("modes.EVAL"), Mode::Eval);
  EXPECT_EQ(mode_from_name("ModeKeys.PREDICT"), Mode::Predict);
  EXPECT_FALSE(mode_from_name("TRAINING").has_value());
}

TEST(Mode, NumbersAreTheRecordEncoding) {
  EXPECT_EQ(mode_from_number(1), Mode::Train);
  EXPECT_EQ(mode_from_number(4), Mode::Global);
  EXPECT_FALSE(mode_from_number(0).has_value());
  EXPECT_FALSE(mode_from_number(5).has_value());
}

}  // namespace
}  // namespace rulestream
