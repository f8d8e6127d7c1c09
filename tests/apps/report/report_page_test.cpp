// The page `rulestream report` writes, parsed by libxml2's HTML parser: its sections, its rule
// rows and the series it plots, against what the simulated jobs are documented to hold
// (apps/simulator/job_simulator.hpp and tensorboard_simulator.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <sstream>

#include "apps/report/html_report.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "tests/apps/report/html_document.hpp"
#include "tests/apps/report/report_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

const boost::json::object& chart_titled(const boost::json::value& data, const std::string& title) {
  for (const auto& chart : data.at("charts").as_array()) {
    if (chart.at("title").as_string() == title) return chart.as_object();
  }
  throw std::runtime_error("no chart " + title);
}

const boost::json::object& line_labelled(const boost::json::object& chart,
                                         const std::string& label) {
  for (const auto& line : chart.at("lines").as_array()) {
    if (line.at("label").as_string() == label) return line.as_object();
  }
  throw std::runtime_error("no line " + label + " in " +
                           std::string(chart.at("title").as_string()));
}

// The line's value at `step`: a number, or NaN for the page's "NaN"/"Infinity" strings.
std::optional<double> value_at(const boost::json::object& line, std::int64_t step) {
  const auto& steps = line.at("steps").as_array();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].as_int64() != step) continue;
    const auto& value = line.at("values").as_array()[i];
    if (value.is_string()) return std::nan("");
    return value.to_number<double>();
  }
  return std::nullopt;
}

std::string row_cell(const HtmlDocument& page, const std::string& configuration, int column) {
  const auto cells = page.texts(
      "//section[@id='rules']//tr[@class='rule' and "
      "@data-configuration='" +
      configuration + "']/td[" + std::to_string(column) + "]");
  return cells.size() == 1 ? cells.front() : "<" + std::to_string(cells.size()) + " rows>";
}

std::string fact(const HtmlDocument& page, const std::string& name) {
  const auto cells = page.texts("//section[@id='job']//tr[th='" + name + "']/td");
  return cells.size() == 1 ? cells.front() : "<" + std::to_string(cells.size()) + " rows>";
}

TEST(ReportPageTest, SmdebugJobHasItsSectionsRulesAndSeries) {
  TempDir dir;
  write_vanishing_job(dir.path());
  const std::string html = report_page(dir.path());
  const HtmlDocument page(html);
  ASSERT_TRUE(page.parsed());
  EXPECT_EQ(page.errors(), std::vector<std::string>{});

  EXPECT_EQ(fact(page, "Path"), dir.path().string());
  EXPECT_EQ(fact(page, "Format"), "smdebug");
  EXPECT_EQ(fact(page, "Workers"), "2: worker_0, worker_1");
  EXPECT_EQ(fact(page, "Steps"), "TRAIN: 60 steps (0 to 59)");
  EXPECT_EQ(fact(page, "Ended"), "yes (end-of-job marker written)");

  // The default rules, in their order; VanishingGradient fires at every step from the fault
  // (every gradient's abs-mean ~1e-10 < 1e-7) to the last, the others never (the scenario
  // changes only the gradients).
  EXPECT_EQ(page.texts("//section[@id='rules']//tr[@class='rule']/@data-configuration"),
            (std::vector<std::string>{"VanishingGradient", "ExplodingTensor", "LossNotDecreasing",
                                      "AllZero"}));
  EXPECT_EQ(row_cell(page, "VanishingGradient", 2), "IssuesFound");
  EXPECT_EQ(row_cell(page, "VanishingGradient", 3),
            std::to_string(kVanishingSteps - kVanishingFault));
  EXPECT_EQ(row_cell(page, "VanishingGradient", 4), std::to_string(kVanishingFault));
  EXPECT_EQ(row_cell(page, "VanishingGradient", 5), std::to_string(kVanishingSteps - 1));
  EXPECT_NE(row_cell(page, "VanishingGradient", 6).find("abs mean"), std::string::npos);
  for (const std::string quiet : {"ExplodingTensor", "LossNotDecreasing", "AllZero"}) {
    EXPECT_EQ(row_cell(page, quiet, 2), "NoIssuesFound") << quiet;
    EXPECT_EQ(row_cell(page, quiet, 3), "0") << quiet;
    EXPECT_EQ(row_cell(page, quiet, 4), "-") << quiet;
  }

  // A chart per loss, per gradient (3 layers: weight and bias), per weight and per bias.
  EXPECT_EQ(page.texts("//section[@id='plots']/section/@data-group"),
            (std::vector<std::string>{"losses", "gradients", "weights", "biases"}));
  EXPECT_EQ(page.count("//section[@data-group='losses']//figure[@class='chart']"), 1u);
  EXPECT_EQ(page.count("//section[@data-group='gradients']//figure[@class='chart']"), 6u);
  EXPECT_EQ(page.count("//section[@data-group='weights']//figure[@class='chart']"), 3u);
  EXPECT_EQ(page.count("//section[@data-group='biases']//figure[@class='chart']"), 3u);
  EXPECT_EQ(page.count("//canvas[@data-chart]"), 13u);

  const boost::json::value data = page_data(html);
  // The TRAIN loss strictly decreases at every step, so each of its 60 points stays.
  const auto& loss = chart_titled(data, "CrossEntropyLoss_output_0");
  EXPECT_TRUE(loss.at("marks_firings").as_bool());
  const auto& train = line_labelled(loss, "TRAIN");
  ASSERT_EQ(train.at("steps").as_array().size(), static_cast<std::size_t>(kVanishingSteps));
  for (std::int64_t step = 1; step < kVanishingSteps; ++step) {
    EXPECT_LT(*value_at(train, step), *value_at(train, step - 1)) << step;
  }
  // Gradients: N(0, 0.0125) before the fault (abs-mean 0.0125 * sqrt(2 / pi) = 0.00997),
  // N(0, 1.25e-10) from it (abs-mean 9.97e-11); 512 elements over both workers.
  const auto& gradient = chart_titled(data, "gradient/MLP_fc1.weight");
  EXPECT_FALSE(gradient.at("marks_firings").as_bool());
  const auto& abs_mean = line_labelled(gradient, "abs_mean");
  EXPECT_NEAR(*value_at(abs_mean, kVanishingFault - 1), 0.00997, 0.002);
  EXPECT_NEAR(*value_at(abs_mean, kVanishingFault), 9.97e-11, 2e-11);
  // No element is ever NaN or infinite: a flat zero, its two ends kept.
  const auto& bad = line_labelled(gradient, "NaN+Inf elements");
  EXPECT_EQ(bad.at("kind").as_string(), "count");
  EXPECT_EQ(bad.at("steps").as_array(), (boost::json::array{0, kVanishingSteps - 1}));
  EXPECT_EQ(*value_at(bad, 0), 0.0);
  EXPECT_EQ(*value_at(bad, kVanishingSteps - 1), 0.0);
  EXPECT_EQ(bad.at("original_points").as_int64(), kVanishingSteps);
  // Two workers: the whole-job abs-mean (of both workers' elements, equally many) lies within
  // the band of the workers' own.
  const auto& low = line_labelled(gradient, "workers' abs_mean (min)");
  const auto& high = line_labelled(gradient, "workers' abs_mean (max)");
  EXPECT_EQ(low.at("steps"), high.at("steps"));
  for (const std::int64_t step : {std::int64_t{0}, kVanishingFault - 1, kVanishingFault}) {
    const double whole = *value_at(abs_mean, step);
    EXPECT_LE(*value_at(low, step), whole * (1 + 1e-5)) << step;
    EXPECT_GE(*value_at(high, step), whole * (1 - 1e-5)) << step;
  }
}

TEST(ReportPageTest, TensorBoardLogdirHasItsTagsGroupedAndTheNaNWhereItBegins) {
  TempDir dir;
  // Exploding from 120: train/loss grows over D = max(10, 200 / 20) = 10 steps to 1e10 at step
  // 130, and is NaN from 131 on; NonFinite first fires there.
  write_exploding_logdir(dir.path(), 200, 120);
  const std::string html = report_page(dir.path());
  const HtmlDocument page(html);
  ASSERT_TRUE(page.parsed());
  EXPECT_EQ(page.errors(), std::vector<std::string>{});
  EXPECT_EQ(fact(page, "Format"), "TensorBoard");
  EXPECT_EQ(fact(page, "Runs"), "1: .");
  EXPECT_EQ(fact(page, "Ended"), "unknown (TensorBoard logdirs have no end marker)");
  EXPECT_EQ(row_cell(page, "NonFinite", 2), "IssuesFound");
  EXPECT_EQ(row_cell(page, "NonFinite", 4), "131");

  // The losses together, then every scalar tag by its prefix.
  EXPECT_EQ(page.texts("//section[@id='plots']/section/@data-group"),
            (std::vector<std::string>{"losses", "eval", "train"}));
  EXPECT_EQ(page.texts("//section[@data-group='train']//figure/@data-title"),
            (std::vector<std::string>{"train/grad_norm", "train/learning_rate", "train/loss"}));

  const boost::json::value data = page_data(html);
  const auto& losses = chart_titled(data, "loss");
  EXPECT_TRUE(losses.at("marks_firings").as_bool());
  const auto& train = line_labelled(losses, "train/loss");
  EXPECT_NEAR(*value_at(train, 130), 1e10, 1e5);
  EXPECT_TRUE(std::isnan(*value_at(train, 131)));
  EXPECT_TRUE(std::isnan(*value_at(train, 199)));
  line_labelled(losses, "eval/loss");  // throws when absent
  const auto& rules = data.at("rules").as_array();
  const auto non_finite = std::find_if(rules.begin(), rules.end(), [](const auto& rule) {
    return rule.at("configuration").as_string() == "NonFinite";
  });
  ASSERT_NE(non_finite, rules.end());
  EXPECT_EQ(non_finite->at("steps").as_array().front().as_int64(), 131);
}

TEST(ReportPageTest, ThePageOpensWithTheVerdicts) {
  // The exploding logdir (above): train/loss grows from step 120 to 1e10 at 130, NaN from 131.
  TempDir logdir;
  write_exploding_logdir(logdir.path(), 200, 120);
  const HtmlDocument page(report_page(logdir.path()));
  ASSERT_TRUE(page.parsed());
  EXPECT_EQ(page.texts("(//section)[1]/@id"), std::vector<std::string>{"verdicts"});
  const auto verdicts = page.texts("//section[@id='verdicts']//li");
  ASSERT_FALSE(verdicts.empty());
  bool diverged = false, non_finite = false;
  for (const std::string& verdict : verdicts) {
    // Each: the rule, the steps, the firings, how it ended, and what it is.
    if (verdict.starts_with("Divergence, step 12")) {
      diverged = verdict.find("lower the learning rate") != std::string::npos;
    }
    if (verdict.starts_with("NonFinite, step 131")) {
      non_finite = verdict.find("open when the job ended") != std::string::npos;
    }
  }
  EXPECT_TRUE(diverged) << ::testing::PrintToString(verdicts);
  EXPECT_TRUE(non_finite) << ::testing::PrintToString(verdicts);

  // smdebug's rules fire per step, with no incident: one verdict for all of a rule's firings.
  TempDir job;
  write_vanishing_job(job.path());
  const HtmlDocument smdebug(report_page(job.path()));
  EXPECT_EQ(smdebug.texts("//section[@id='verdicts']//li/@data-configuration"),
            std::vector<std::string>{"VanishingGradient"});
  const auto text = smdebug.texts("//section[@id='verdicts']//li");
  ASSERT_EQ(text.size(), 1U);
  EXPECT_EQ(text[0].rfind("VanishingGradient, step " + std::to_string(kVanishingFault) + "-" +
                              std::to_string(kVanishingSteps - 1) + " (" +
                              std::to_string(kVanishingSteps - kVanishingFault) + " firings): ",
                          0),
            0U)
      << text[0];

  // A healthy logdir says so.
  TempDir healthy;
  {
    TensorBoardWriter writer(healthy.path() / "events.out.tfevents.1.host");
    for (int step = 0; step < 100; ++step) {
      writer.add_scalar("train/loss", step, 1.0F / (1.0F + 0.05F * static_cast<float>(step)), step);
    }
  }
  const HtmlDocument quiet(report_page(healthy.path()));
  EXPECT_EQ(
      quiet.texts("//section[@id='verdicts']/p"),
      std::vector<std::string>{"No rule found an issue (the rules table says what each judged)."});
}

TEST(ReportPageTest, KerasRunsShareTheLossChartAndHistogramsAreBands) {
  TempDir dir;
  {
    TensorBoardWriter train(dir.path() / "train" / "events.out.tfevents.1.host");
    TensorBoardWriter validation(dir.path() / "validation" / "events.out.tfevents.1.host");
    for (std::int64_t step = 0; step < 5; ++step) {
      const float scale = static_cast<float>(step + 1);
      const double second = 1.7e9 + static_cast<double>(step);
      train.add_scalar("epoch_loss", step, 1.0F / scale, second);
      validation.add_scalar("epoch_loss", step, 1.5F / scale, second + 0.5);
      const std::vector<float> values{-scale, 0.0F, 2 * scale, 3 * scale};
      train.add_histogram("grad/fc1", step, values, second);
    }
  }
  const std::string html = report_page(dir.path());
  const HtmlDocument page(html);
  EXPECT_EQ(fact(page, "Runs"), "2: train, validation");
  EXPECT_EQ(fact(page, "Steps"), "EVAL: 5 steps (0 to 4); TRAIN: 5 steps (0 to 4)");
  // Wall times: train 1.7e9 + 0..4, validation 0.5 s later (whole seconds in the ISO times).
  EXPECT_EQ(fact(page, "Time span"), "2023-11-14T22:13:20Z to 2023-11-14T22:13:24Z (4.5 s)");
  EXPECT_EQ(page.texts("//section[@id='plots']/section/@data-group"),
            (std::vector<std::string>{"losses", "scalars", "histograms"}));

  const boost::json::value data = page_data(html);
  const auto& losses = chart_titled(data, "loss");
  EXPECT_NEAR(*value_at(line_labelled(losses, "train: epoch_loss"), 4), 0.2, 1e-6);
  EXPECT_NEAR(*value_at(line_labelled(losses, "validation: epoch_loss"), 4), 0.3, 1e-6);
  const auto& by_run = chart_titled(data, "epoch_loss");
  line_labelled(by_run, "train");  // one curve per run; throws when absent
  line_labelled(by_run, "validation");

  // At step s the values are (s + 1) * {-1, 0, 2, 3}: min -(s + 1), max 3 (s + 1), mean s + 1,
  // and sum of squares 14 (s + 1)^2, so std = sqrt(14 / 4 - 1) (s + 1) = sqrt(2.5) (s + 1).
  const auto& histogram = chart_titled(data, "train: grad/fc1");
  for (std::int64_t step = 0; step < 5; ++step) {
    const double scale = static_cast<double>(step + 1);
    EXPECT_NEAR(*value_at(line_labelled(histogram, "min to max (min)"), step), -scale, 1e-5);
    EXPECT_NEAR(*value_at(line_labelled(histogram, "min to max (max)"), step), 3 * scale, 1e-5);
    EXPECT_NEAR(*value_at(line_labelled(histogram, "mean"), step), scale, 1e-5);
    // The percentile bands come from TensorBoard's default buckets (tested on buckets made by
    // hand in tensorboard_event_test.cpp); here they must nest within min to max, in order.
    const double p5 = *value_at(line_labelled(histogram, "5th to 95th percentile (min)"), step);
    const double p25 = *value_at(line_labelled(histogram, "25th to 75th percentile (min)"), step);
    const double median = *value_at(line_labelled(histogram, "median"), step);
    const double p75 = *value_at(line_labelled(histogram, "25th to 75th percentile (max)"), step);
    const double p95 = *value_at(line_labelled(histogram, "5th to 95th percentile (max)"), step);
    EXPECT_LE(-scale - 1e-5, p5);
    EXPECT_LE(p5, p25);
    EXPECT_LE(p25, median);
    EXPECT_LE(median, p75);
    EXPECT_LE(p75, p95);
    EXPECT_LE(p95, 3 * scale + 1e-5);
    // Two of the four values are at or below 0 and two at or above 2 (s + 1): the median lies
    // between the buckets of 0 and 2 (s + 1), the quartiles within those of -(s + 1) .. 0 and
    // 2 (s + 1) .. 3 (s + 1).
    EXPECT_GE(median, -1e-5);
    EXPECT_LE(median, 2 * scale * 1.1 + 1e-5);
    EXPECT_LE(p25, 1e-5);
    EXPECT_GE(p75, 2 * scale / 1.1 - 1e-5);
  }
}

// A run written to step 9, then resumed from a checkpoint at step 5 and stopped at step 7: as
// TensorBoard shows it, the resumed values replace the first pass from step 5 on, beyond step 7
// too (stages/series/restart_rule.hpp). Steps 8 and 9 of the first pass are gone.
TEST(ReportPageTest, ARestartedRunIsDrawnAsTensorBoardDrawsIt) {
  TempDir dir;
  {
    TensorBoardWriter train(dir.path() / "train" / "events.out.tfevents.1.host");
    for (std::int64_t step = 0; step < 10; ++step) {
      const auto square = static_cast<float>(step * step);  // no three points on a line
      train.add_scalar("epoch_loss", step, 1.0F + square, 100.0 + static_cast<double>(step));
    }
    for (std::int64_t step = 5; step < 8; ++step) {
      const auto square = static_cast<float>(step * step);
      train.add_scalar("epoch_loss", step, 200.0F + square, 200.0 + static_cast<double>(step));
    }
  }
  const std::string html = report_page(dir.path());
  const HtmlDocument page(html);
  EXPECT_EQ(fact(page, "Steps"), "TRAIN: 8 steps (0 to 7)");
  const boost::json::value data = page_data(html);
  const auto& line = line_labelled(chart_titled(data, "epoch_loss"), "train");
  std::vector<std::int64_t> steps;
  for (const auto& step : line.at("steps").as_array()) steps.push_back(step.as_int64());
  EXPECT_EQ(steps, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(value_at(line, 4), 17.0);   // the first pass: 1 + 4^2
  EXPECT_EQ(value_at(line, 5), 225.0);  // the resumed one: 200 + 5^2
  EXPECT_EQ(value_at(line, 7), 249.0);
}

// Text metrics are charted as a logdir is. A CSV log's rows have no time (or seconds since the
// start, which are no dates): the job's time span is unknown, not a span in 1970.
TEST(ReportPageTest, TextMetricsAreChartedAndTheirTimeSpanIsNoDateTheyDoNotHold) {
  for (const std::string header : {"step,train_loss", "step,time/time_elapsed,train_loss"}) {
    TempDir dir;
    std::string csv = header + "\n";
    for (int step = 0; step < 5; ++step) {
      csv += std::to_string(step) + (header.find("time") != std::string::npos ? ",10" : "") + "," +
             std::to_string(1.0 / (step + 1)) + "\n";
    }
    testing::write_text_file(dir.path() / "metrics.csv", csv);
    const std::string html = report_page(dir.path());
    const HtmlDocument page(html);
    EXPECT_EQ(fact(page, "Format"), "text metrics") << header;
    EXPECT_EQ(fact(page, "Time span"), "unknown") << header;
    const boost::json::value data = page_data(html);
    EXPECT_NEAR(*value_at(line_labelled(chart_titled(data, "loss"), "metrics.csv: train_loss"), 4),
                0.2, 1e-6)
        << header;
  }
}

TEST(ReportPageTest, PageAsksForNothingOutsideItself) {
  TempDir dir;
  write_exploding_logdir(dir.path(), 50, 30);
  const std::string html = report_page(dir.path());
  const HtmlDocument page(html);
  EXPECT_EQ(page.count("//*[@src]"), 0u);
  EXPECT_EQ(page.count("//link"), 0u);
  EXPECT_EQ(page.count("//*[@href]"), 0u);
  const auto scripts = page.texts("//script");
  ASSERT_EQ(scripts.size(), 3u) << "the data, the charting library, the page's own script";
  EXPECT_NE(scripts[1].find("Chart.js v3"), std::string::npos);
  EXPECT_NE(scripts[2].find("new Chart("), std::string::npos);
}

TEST(ReportPageTest, NamesThatLookLikeMarkupStayText) {
  // A tag, a rule configuration and a finding may hold anything a user wrote.
  const std::string hostile = "x</script><b id=\"injected\">&amp;<!--";
  JobReport report;
  report.job = {.path = "/jobs/" + hostile, .format = "TensorBoard"};
  report.rules.push_back({.configuration = hostile,
                          .rule = "NonFinite",
                          .status = "IssuesFound",
                          .firings = 1,
                          .first_step = 3,
                          .last_step = 3,
                          .finding = hostile,
                          .firing_steps = {3}});
  report.charts.push_back(
      {.group = hostile,
       .title = hostile,
       .lines = {{.label = hostile, .points = {{3, 1.5}}, .original_points = 1}},
       .marks_firings = true});
  std::ostringstream out;
  write_report_html(report, "/*! Chart.js v3 stand-in */ window.Chart = function () {};", out);
  const HtmlDocument page(out.str());
  EXPECT_EQ(page.count("//*[@id='injected']"), 0u);
  EXPECT_EQ(page.texts("//tr[@class='rule']/@data-configuration"),
            std::vector<std::string>{hostile});
  EXPECT_EQ(page.texts("//tr[@class='rule']/td[6]"), std::vector<std::string>{hostile});
  EXPECT_EQ(page.texts("//figure/figcaption"), std::vector<std::string>{hostile});
  const boost::json::value data = page_data(out.str());
  EXPECT_EQ(data.at("charts").at(0).at("lines").at(0).at("label").as_string(), hostile);
  EXPECT_EQ(data.at("rules").at(0).at("finding").as_string(), hostile);
}

}  // namespace
}  // namespace rulestream::testing
