// ServiceMetrics: what /metrics says, read back with the strict Prometheus reader.
#include "apps/serve/service_metrics.hpp"

#include <gtest/gtest.h>

#include "tests/support/prometheus_text.hpp"

namespace rulestream {
namespace {

TEST(ServiceMetrics, CountsByFormatRuleAndSinkWithLabelsEscaped) {
  ServiceMetrics metrics;
  metrics.add_read(TrialFormat::Smdebug, 3, 21, 0, 1000);
  metrics.add_read(TrialFormat::Smdebug, 2, 14, 0, 500);
  metrics.add_read(TrialFormat::TensorBoard, 0, 0, 620, 32786);
  metrics.add_firing("VG \"strict\"", "VanishingGradient");
  metrics.add_firing("VG \"strict\"", "VanishingGradient");
  metrics.add_evaluations("VG \"strict\"", "VanishingGradient", 40);
  const std::string odd_sink = "file /tmp/a\\b\nc";
  metrics.add_sink_event(odd_sink);
  metrics.add_sink_event(odd_sink);
  metrics.add_sink_failure(odd_sink);
  metrics.add_synchronous_delivery(odd_sink);
  metrics.add_jobs_found(3);
  const auto text = testing::parse_prometheus_text(
      metrics.render({{JobState::Queued, 0}, {JobState::Running, 1}, {JobState::Finished, 2}}));
  EXPECT_EQ(text.value("rulestream_jobs", {{"state", "Running"}}), 1);
  EXPECT_EQ(text.value("rulestream_jobs", {{"state", "Error"}}), 0);  // every state, always
  EXPECT_EQ(text.value("rulestream_jobs_found_total"), 3);
  EXPECT_EQ(text.value("rulestream_steps_read_total", {{"format", "smdebug"}}), 5);
  EXPECT_EQ(text.value("rulestream_tensors_read_total", {{"format", "smdebug"}}), 35);
  EXPECT_EQ(text.value("rulestream_read_bytes_total", {{"format", "smdebug"}}), 1500);
  EXPECT_EQ(text.value("rulestream_values_read_total", {{"format", "tensorboard"}}), 620);
  const std::map<std::string, std::string> rule{{"rule_configuration", "VG \"strict\""},
                                                {"rule", "VanishingGradient"}};
  EXPECT_EQ(text.value("rulestream_rule_firings_total", rule), 2);
  EXPECT_EQ(text.value("rulestream_rule_evaluations_total", rule), 40);
  // Two events handed to a sink that delivers within write(): one taken, one refused.
  EXPECT_EQ(text.value("rulestream_sink_events_total", {{"sink", odd_sink}}), 2);
  EXPECT_EQ(text.value("rulestream_sink_deliveries_total", {{"sink", odd_sink}}), 1);
  EXPECT_EQ(text.value("rulestream_sink_failures_total", {{"sink", odd_sink}}), 1);
  EXPECT_EQ(text.value("rulestream_sink_retries_total", {{"sink", odd_sink}}), 0);
  EXPECT_EQ(text.value("rulestream_sink_dead_letters_total", {{"sink", odd_sink}}), 0);
  for (const auto& family : text.families) {
    EXPECT_EQ(family.name.rfind("rulestream_", 0), 0u) << family.name;
    EXPECT_FALSE(family.help.empty()) << family.name;
  }
}

// A sink whose delivery counts the test sets, as a sink's delivering thread would move them.
class CountingSink final : public Sink {
 public:
  explicit CountingSink(std::string name) : name_(std::move(name)) {}
  std::string describe() const override { return name_; }
  void write(const RuleEvent&) override {}
  void flush() override {}
  std::optional<SinkDeliveryCounts> delivery() const override { return counts; }
  SinkDeliveryCounts counts;

 private:
  std::string name_;
};

double delivery_metric(const ServiceMetrics& metrics, const std::string& name,
                       const std::string& sink) {
  return testing::parse_prometheus_text(metrics.render({})).value(name, {{"sink", sink}});
}

TEST(ServiceMetrics, SinkDeliveriesAreReadFromTheSinkWhileTrackedAndKeptAfter) {
  ServiceMetrics metrics;
  const std::string name = "webhook https://hooks.example/…";
  CountingSink first(name);
  first.counts = {.delivered = 5, .retries = 1, .failures = 1, .dead_letters = 0};  // before
  metrics.track_sink(first);
  metrics.track_sink(first);  // a second holder: still counted once
  first.counts = {.delivered = 9, .retries = 4, .failures = 6, .dead_letters = 2};
  // What it did while tracked: 9-5, 4-1, 6-1, 2-0.
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_deliveries_total", name), 4);
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_retries_total", name), 3);
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_failures_total", name), 5);
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_dead_letters_total", name), 2);
  metrics.untrack_sink(first);
  first.counts.delivered = 10;  // one holder left: still read
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_deliveries_total", name), 5);
  metrics.untrack_sink(first);
  first.counts.delivered = 1000;  // no longer tracked: its last counts stay, later ones do not
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_deliveries_total", name), 5);

  // Another sink described alike (a second job's webhook to the same URL) adds to the same
  // series, from zero for what it did before it was tracked.
  CountingSink second(name);
  metrics.track_sink(second);
  second.counts = {.delivered = 2, .retries = 0, .failures = 1, .dead_letters = 1};
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_deliveries_total", name), 7);
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_failures_total", name), 6);
  EXPECT_EQ(delivery_metric(metrics, "rulestream_sink_dead_letters_total", name), 3);
  metrics.untrack_sink(second);
  const auto text = testing::parse_prometheus_text(metrics.render({}));
  EXPECT_EQ(text.family("rulestream_sink_deliveries_total")->type, "counter");
  EXPECT_EQ(text.family("rulestream_sink_deliveries_total")->samples.size(), 1u);
}

TEST(ServiceMetrics, LeasesHeldAreAGaugeOnlyWithACoordinator) {
  ServiceMetrics metrics;
  const auto alone = testing::parse_prometheus_text(metrics.render({}));
  EXPECT_EQ(alone.family("rulestream_coordinator_leases_held"), nullptr);
  const auto shared = testing::parse_prometheus_text(metrics.render({}, 3));
  ASSERT_NE(shared.family("rulestream_coordinator_leases_held"), nullptr);
  EXPECT_EQ(shared.family("rulestream_coordinator_leases_held")->type, "gauge");
  EXPECT_EQ(shared.value("rulestream_coordinator_leases_held"), 3);
}

TEST(ServiceMetrics, LatencyIsAHistogramWithCumulativeBuckets) {
  ServiceMetrics metrics;
  // By hand: 0.003 s falls in le=0.005; 0.2 twice in le=0.25; 100 s only in +Inf.
  for (const double seconds : {0.003, 0.2, 0.2, 100.0}) metrics.observe_event_latency(seconds);
  const auto text = testing::parse_prometheus_text(metrics.render({}));
  EXPECT_EQ(text.family("rulestream_event_latency_seconds")->type, "histogram");
  const auto bucket = [&](const std::string& le) {
    return text.value("rulestream_event_latency_seconds_bucket", {{"le", le}});
  };
  EXPECT_EQ(bucket("0.005"), 1);
  EXPECT_EQ(bucket("0.1"), 1);
  EXPECT_EQ(bucket("0.25"), 3);
  EXPECT_EQ(bucket("60"), 3);
  EXPECT_EQ(bucket("+Inf"), 4);
  EXPECT_EQ(text.value("rulestream_event_latency_seconds_count"), 4);
  EXPECT_DOUBLE_EQ(text.value("rulestream_event_latency_seconds_sum"), 100.403);
}

}  // namespace
}  // namespace rulestream
