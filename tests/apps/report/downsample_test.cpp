#include "apps/report/downsample.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace rulestream {
namespace {

std::vector<std::int64_t> steps_of(const std::vector<SeriesPoint>& points) {
  std::vector<std::int64_t> steps;
  for (const auto& point : points) steps.push_back(point.step);
  return steps;
}

std::vector<SeriesPoint> series(const std::vector<double>& values) {
  std::vector<SeriesPoint> points;
  for (std::size_t i = 0; i < values.size(); ++i) {
    points.push_back({static_cast<std::int64_t>(i), values[i]});
  }
  return points;
}

TEST(DownsampleTest, ShortSeriesKeepsEveryPointThatIsNotInsideAnEqualRun) {
  // Steps 2..4 are a run of 5s: its interior (step 3) adds nothing to the line.
  const auto points = series({1, 2, 5, 5, 5, 3});
  EXPECT_EQ(steps_of(downsample(points, 10, {})), (std::vector<std::int64_t>{0, 1, 2, 4, 5}));
}

TEST(DownsampleTest, EachBucketKeepsItsLowestAndHighest) {
  // 12 points in 3 buckets of 4: [3 9 1 4] [7 2 8 6] [5 0 9 3]. By hand: bucket 0 keeps steps
  // 1 (9) and 2 (1); bucket 1 steps 5 (2) and 6 (8); bucket 2 steps 9 (0) and 10 (9); and the
  // series' ends 0 and 11.
  const auto points = series({3, 9, 1, 4, 7, 2, 8, 6, 5, 0, 9, 3});
  EXPECT_EQ(steps_of(downsample(points, 3, {})),
            (std::vector<std::int64_t>{0, 1, 2, 5, 6, 9, 10, 11}));
}

TEST(DownsampleTest, StepsToKeepSurviveEvenWhenNeitherExtremeNorEnd) {
  const auto points = series({3, 9, 1, 4, 7, 2, 8, 6, 5, 0, 9, 3});
  const std::vector<std::int64_t> keep{3, 7};  // 4 and 6: in the middle of their buckets
  EXPECT_EQ(steps_of(downsample(points, 3, keep)),
            (std::vector<std::int64_t>{0, 1, 2, 3, 5, 6, 7, 9, 10, 11}));
}

TEST(DownsampleTest, NonFiniteStretchKeepsItsEnds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Buckets of 4: [1 2 nan nan] [nan inf 3 4]. Bucket 0: lowest 0, highest 1, first and last
  // non-finite 2 and 3; bucket 1: lowest 6, highest 7, non-finite 4 and 5. Steps 2..4 are a run
  // of NaN: its interior (3) goes.
  const auto points = series({1, 2, nan, nan, nan, inf, 3, 4});
  const auto kept = downsample(points, 2, {});
  EXPECT_EQ(steps_of(kept), (std::vector<std::int64_t>{0, 1, 2, 4, 5, 6, 7}));
  EXPECT_TRUE(std::isnan(kept[2].value));
  EXPECT_TRUE(std::isinf(kept[4].value));
}

TEST(DownsampleTest, FlatSeriesCostsTwoPoints) {
  const std::vector<SeriesPoint> points = series(std::vector<double>(100000, 0.0));
  EXPECT_EQ(steps_of(downsample(points, kReportBuckets, {})),
            (std::vector<std::int64_t>{0, 99999}));
}

TEST(DownsampleTest, ExtremeInsideAFlatRunKeepsTheRunsEnds) {
  // 0 at steps 0..1, then 5 at steps 2..9 (a run crossing buckets of 2), then 0. Each bucket of
  // the run picks a 5 as its highest; the run keeps its ends 2 and 9, so the plateau is drawn
  // whole.
  const auto points = series({0, 0, 5, 5, 5, 5, 5, 5, 5, 5, 0, 0});
  EXPECT_EQ(steps_of(downsample(points, 6, {})), (std::vector<std::int64_t>{0, 1, 2, 9, 10, 11}));
}

TEST(DownsampleTest, LongSeriesStaysWithinTwoPointsPerBucketPlusKeptSteps) {
  std::vector<double> values;
  for (int i = 0; i < 100000; ++i) values.push_back(std::sin(i * 0.001) + 1e-3 * (i % 7));
  const std::vector<std::int64_t> keep{500, 600, 70000};
  const auto kept = downsample(series(values), 1000, keep);
  EXPECT_LE(kept.size(), 2 * 1000 + 2 + keep.size());
  for (const auto step : keep) {
    EXPECT_TRUE(std::any_of(kept.begin(), kept.end(), [&](const SeriesPoint& p) {
      return p.step == step;
    })) << step;
  }
  // The global extremes survive whatever the bucketing.
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const auto has = [&](double v) {
    return std::any_of(kept.begin(), kept.end(),
                       [&](const SeriesPoint& p) { return p.value == v; });
  };
  EXPECT_TRUE(has(*low));
  EXPECT_TRUE(has(*high));
}

}  // namespace
}  // namespace rulestream
