// The real TensorBoard samples judged, not only read: NonFinite fires once on each scalar series
// that holds a NaN or an infinity, at its first one, as the independent reader's findings
// (../shared/tensorboard-samples/expected) say, and nowhere else.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/series_pipeline.hpp"
#include "tests/support/precise_json.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;
using Firing = std::pair<std::int64_t, std::string>;  // step, series

// Where the independent reader found each scalar series' first non-finite value: its
// points are [step, wall_time, value], non-finite values spelled "NaN", "Infinity", "-Infinity".
std::set<Firing> first_non_finite(const json::object& expected) {
  std::set<Firing> firings;
  for (const auto& [run, run_value] : expected.at("runs").as_object()) {
    for (const auto& [tag, tag_value] : run_value.at("tags").as_object()) {
      const json::object& found = tag_value.as_object();
      if (found.at("kind") != "scalar") continue;
      for (const json::value& point : found.at("points").as_array()) {
        if (!point.as_array().at(2).is_string()) continue;
        const std::string series =
            run == "." ? std::string(tag) : std::string(run) + ": " + std::string(tag);
        firings.emplace(point.as_array().at(0).to_number<std::int64_t>(), series);
        break;
      }
    }
  }
  return firings;
}

TEST(TensorBoardSamplesJudged, NonFiniteFiresAtEachSeriesFirstNonFiniteValue) {
  const auto dir = testing::tensorboard_samples_dir();
  if (!dir) GTEST_SKIP() << "tensorboard-samples not found: the samples are not judged";
  std::size_t with_non_finite = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*dir / "expected")) {
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const json::value expected =
        testing::parse_json_precisely(testing::read_text_file(entry.path()), entry.path().string());
    const std::set<Firing> wanted = first_non_finite(expected.as_object());
    if (!wanted.empty()) ++with_non_finite;

    PipelineConfig config;
    config.paths = {(*dir / "logdirs" / name).string()};
    config.rules.push_back({.rule = "NonFinite"});
    auto recording = std::make_unique<testing::RecordingSink>();
    const testing::RecordingSink* sink = recording.get();
    std::vector<std::unique_ptr<Sink>> sinks;
    sinks.push_back(std::move(recording));
    SeriesPipeline pipeline(std::move(config), std::move(sinks));
    const SeriesReport report = pipeline.run();

    std::set<Firing> fired;
    for (const RuleEvent& event : sink->events()) {
      if (event.kind != RuleEvent::Kind::ConditionMet) continue;
      ASSERT_FALSE(event.tensors.empty());
      fired.emplace(event.global_step, event.tensors.front());
    }
    EXPECT_EQ(fired, wanted);
    ASSERT_EQ(report.statuses.size(), 1U);
    if (!wanted.empty()) {
      EXPECT_EQ(report.statuses[0].status, RuleStatus::IssuesFound);
    }
  }
  // sb3-ppo-nan: explained_variance is NaN in both of its runs (497 and 2 values).
  EXPECT_GE(with_non_finite, 1U);
}

}  // namespace
}  // namespace rulestream
