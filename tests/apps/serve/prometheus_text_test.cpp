// The strict Prometheus text reader the serve tests scrape /metrics with: it must accept what
// Prometheus accepts and refuse what it refuses, or a test passing on it proves nothing.
#include "tests/support/prometheus_text.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace rulestream {
namespace {

using testing::parse_prometheus_text;

TEST(PrometheusText, ReadsFamiliesLabelsEscapesAndHistograms) {
  const auto text = parse_prometheus_text(
      "# HELP jobs Jobs by state.\n"
      "# TYPE jobs gauge\n"
      "jobs{state=\"Running\"} 3\n"
      "jobs{state=\"Error\"} 0\n"
      "# a comment\n"
      "\n"
      "# TYPE events_total counter\n"
      "events_total{sink=\"a \\\"b\\\" \\\\ c\\nd\"} 12 1700000000000\n"
      "# TYPE latency_seconds histogram\n"
      "latency_seconds_bucket{le=\"0.1\"} 1\n"
      "latency_seconds_bucket{le=\"+Inf\"} 2\n"
      "latency_seconds_sum 0.35\n"
      "latency_seconds_count 2\n"
      "odd NaN\n");
  ASSERT_EQ(text.families.size(), 4u);
  EXPECT_EQ(text.families[0].type, "gauge");
  EXPECT_EQ(text.families[0].help, "Jobs by state.");
  EXPECT_EQ(text.value("jobs", {{"state", "Running"}}), 3.0);
  EXPECT_EQ(text.value("events_total", {{"sink", "a \"b\" \\ c\nd"}}), 12.0);
  EXPECT_EQ(text.family("latency_seconds")->samples.size(), 4u);
  EXPECT_EQ(text.value("latency_seconds_bucket", {{"le", "+Inf"}}), 2.0);
  EXPECT_EQ(text.family("odd")->type, "untyped");
  EXPECT_TRUE(std::isnan(text.value("odd")));
  EXPECT_THROW(text.value("jobs", {{"state", "Finished"}}), std::out_of_range);
}

TEST(PrometheusText, RefusesWhatPrometheusRefuses) {
  const std::vector<std::pair<std::string, std::string>> refused{
      {"a 1", "does not end in a line feed"},
      {"1a 1\n", "a sample without a metric name"},
      {"a{b=\"1\",b=\"2\"} 1\n", "given twice"},
      {"a{b=1} 1\n", "not followed by"},
      {"a{b=\"\\t\"} 1\n", "unknown escape"},
      {"a{b=\"1\" 1\n", "not separated"},
      {"a one\n", "not a sample value"},
      {"a 1 soon\n", "not a timestamp"},
      {"a 1\nb 1\na 2\n", "appears in two places"},
      {"a 1\na 2\n", "the same series twice"},
      {"a 1\n# TYPE a gauge\n", "after its samples"},
      {"# TYPE a gauge\n# TYPE a gauge\n", "TYPE twice"},
      {"# TYPE a meter\n", "unknown type"},
      {"# TYPE a counter\n", "must end in _total"},
      {"# TYPE a_total counter\na_total -1\n", "below zero"},
      {"# TYPE h histogram\nh 1\n", "a histogram's samples"},
  };
  for (const auto& [text, why] : refused) {
    try {
      parse_prometheus_text(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(why), std::string::npos)
          << text << " -> " << error.what();
      EXPECT_EQ(std::string(error.what()).rfind("line ", 0), 0u) << error.what();
    }
  }
}

}  // namespace
}  // namespace rulestream
