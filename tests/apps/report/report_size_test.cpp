// The bound: a 100,000-step job's page stays under 5 MB (downsampling keeps each curve
// to about 2,000 points plus the firing steps). How fast it opens is measured in
// benchmarks/report_e2e.cpp, not here.
#include <gtest/gtest.h>

#include <sstream>

#include "apps/report/chart_library.hpp"
#include "apps/report/chart_lines.hpp"
#include "apps/report/html_report.hpp"
#include "tests/apps/report/report_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

constexpr std::size_t kPageLimit = 5'000'000;

TEST(ReportSizeTest, HundredThousandStepLogdirPageStaysUnderFiveMegabytes) {
  TempDir dir;
  write_exploding_logdir(dir.path(), 100'000, 60'000);
  JobReport report;
  const std::string html = report_page(dir.path(), &report);
  EXPECT_LT(html.size(), kPageLimit);
  // Every firing step is kept on the loss curves (NonFinite fires from the first NaN).
  const auto& losses = report.charts.front();
  ASSERT_EQ(losses.title, "loss");
  for (const auto& rule : report.rules) {
    for (const auto step : rule.firing_steps) {
      const auto& points = losses.lines.front().points;
      EXPECT_TRUE(std::any_of(points.begin(), points.end(),
                              [&](const SeriesPoint& p) { return p.step == step; }))
          << rule.configuration << " at " << step;
    }
  }
}

// An smdebug job of 100,000 steps takes minutes to simulate here (200,000 files), so the trial
// is measured in benchmarks/report_e2e.cpp; this checks the page's writer at that scale, in the
// shape of the simulated job's page: a loss of 100,000 noisy points and 12 layers' charts of 5
// such curves each, and a rule firing at every step of the second half (as VanishingGradient
// does from the fault step), each firing kept on the loss.
TEST(ReportSizeTest, HundredThousandPointCurvesOnEveryChartStayUnderFiveMegabytes) {
  constexpr std::int64_t kSteps = 100'000;
  std::vector<std::int64_t> firings;
  for (std::int64_t step = kSteps / 2; step < kSteps; ++step) firings.push_back(step);
  std::vector<SeriesPoint> noisy;
  for (std::int64_t step = 0; step < kSteps; ++step) {
    // Values with six significant digits, as many as the page keeps, none repeating.
    noisy.push_back({step, 0.0123457 * (1.0 + 1e-5 * static_cast<double>((step * 7919) % 10007))});
  }
  JobReport report;
  report.rules.push_back({.configuration = "VanishingGradient",
                          .rule = "VanishingGradient",
                          .status = "IssuesFound",
                          .firings = kSteps / 2,
                          .first_step = kSteps / 2,
                          .last_step = kSteps - 1,
                          .firing_steps = firings});
  for (int i = 0; i < 13; ++i) {
    Chart chart{.group = i == 0 ? "losses" : "gradients",
                .title = "t" + std::to_string(i),
                .marks_firings = i == 0};
    for (int line = 0; line < (i == 0 ? 1 : 5); ++line) {
      chart.lines.push_back(downsampled_line(
          "l", ChartLine::Kind::Line, noisy,
          i == 0 ? std::span<const std::int64_t>(firings) : std::span<const std::int64_t>()));
    }
    report.charts.push_back(std::move(chart));
  }
  std::ostringstream page;
  write_report_html(report, load_chart_library(), page);
  EXPECT_LT(page.str().size(), kPageLimit);
}

}  // namespace
}  // namespace rulestream::testing
