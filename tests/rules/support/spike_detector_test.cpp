#include "rules/support/spike_detector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace rulestream {
namespace {

// The values at which the detector called a spike.
std::vector<std::size_t> spikes_in(const std::vector<double>& values, SpikeOptions options = {}) {
  SpikeDetector detector(options);
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (detector.add(values[i]).spike) at.push_back(i);
  }
  return at;
}

TEST(SpikeDetectorTest, AJumpAfterAFlatStretchIsASpike) {
  std::vector<double> values(30, 1.0);
  values.push_back(10.0);
  // A flat series has no spread: any value more than min_increase (100%) above it is one.
  EXPECT_EQ(spikes_in(values), std::vector<std::size_t>{30});
  SpikeDetector detector({});
  for (int i = 0; i < 30; ++i) detector.add(1.0);
  const SpikeVerdict verdict = detector.add(10.0);
  EXPECT_EQ(verdict.level, 1.0);
  EXPECT_EQ(verdict.spread, 0.0);
  EXPECT_TRUE(std::isinf(verdict.deviations));
}

TEST(SpikeDetectorTest, NothingFiresDuringTheWarmup) {
  // Five values, then a jump: the default warm-up is 20 values.
  EXPECT_TRUE(spikes_in({1.0, 1.0, 1.0, 1.0, 1.0, 10.0}).empty());
  EXPECT_EQ(spikes_in({1.0, 1.0, 1.0, 1.0, 1.0, 10.0}, {.warmup = 5}), std::vector<std::size_t>{5});
}

TEST(SpikeDetectorTest, NoiseIsNoSpikeButAFarValueIs) {
  // 1.0 and 1.1 alternating: the level settles near 1.05 and the spread near 1.2533 x 0.05.
  // 1.2 is 2.4 spreads and 14% above: quiet. 10 is about 140 spreads and 850% above: a spike.
  std::vector<double> values;
  for (int i = 0; i < 200; ++i) values.push_back(i % 2 == 0 ? 1.0 : 1.1);
  values.push_back(1.2);
  values.push_back(10.0);
  EXPECT_EQ(spikes_in(values), std::vector<std::size_t>{201});
}

TEST(SpikeDetectorTest, BothThresholdsMustBeCrossed) {
  // Spread 0 makes any rise infinitely many spreads; 1.9 is still less than twice 1.0.
  std::vector<double> values(30, 1.0);
  values.push_back(1.9);
  EXPECT_TRUE(spikes_in(values).empty());
  EXPECT_EQ(spikes_in(values, {.min_increase = 0.5}), std::vector<std::size_t>{30});

  // The other way round: 1.0 and 3.0 alternating settle the level near 2 and the mean absolute
  // deviation near 1 (spread near 1.2533). 6.0 is about 4 above the level, twice its magnitude
  // (past min_increase), but only about 3.2 spreads: quiet at the default 5 deviations, a spike
  // at 2.5.
  std::vector<double> noisy;
  for (int i = 0; i < 200; ++i) noisy.push_back(i % 2 == 0 ? 1.0 : 3.0);
  noisy.push_back(6.0);
  EXPECT_TRUE(spikes_in(noisy).empty());
  EXPECT_EQ(spikes_in(noisy, {.threshold = 2.5}), std::vector<std::size_t>{200});
}

TEST(SpikeDetectorTest, ALastingShiftIsLearnedAndStopsFiring) {
  std::vector<double> values(30, 1.0);
  values.insert(values.end(), 300, 3.0);
  const auto at = spikes_in(values);
  ASSERT_FALSE(at.empty());
  EXPECT_EQ(at.front(), 30U);
  EXPECT_LT(at.back(), 100U) << "the level should have moved up to the new plateau";
}

TEST(SpikeDetectorTest, OneSpikeDoesNotHideTheNext) {
  // Clipped learning: a spike moves the level by a bounded amount, so an equal spike right
  // after is still far above it.
  std::vector<double> values(40, 1.0);
  values.push_back(50.0);
  values.push_back(1.0);
  values.push_back(50.0);
  EXPECT_EQ(spikes_in(values), (std::vector<std::size_t>{40, 42}));
}

}  // namespace
}  // namespace rulestream
