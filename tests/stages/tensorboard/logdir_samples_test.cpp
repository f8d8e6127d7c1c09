// Every logdir of ../shared/tensorboard-samples read as rulestream reads it, against what an
// independent reader (protoc-generated classes of TensorBoard's own .proto files, both CRCs
// checked) found in it: runs, tags, kinds, plugins, every value in file order (scalars bit for
// bit as float32 widened to double, histogram figures to 1e-9 relative), and the broken files.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sources/open/storage_factory.hpp"
#include "stages/series/series_reader.hpp"
#include "stages/tensorboard/logdir_runs.hpp"
#include "tests/support/precise_json.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;

struct ReadPoint {
  std::int64_t step = 0;
  double wall_time = 0.0;
  SummaryReading reading;
};

struct ReadTag {
  TagKind kind = TagKind::Other;
  std::string plugin_name;
  std::vector<ReadPoint> points;
};

class CollectingSink final : public SeriesValueSink {
 public:
  void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    ReadTag& read = runs[tag.run][tag.name];
    read.kind = tag.kind;
    read.plugin_name = tag.plugin_name;
    read.points.push_back({step, wall_time, reading});
  }
  std::map<std::string, std::map<std::string, ReadTag>> runs;
};

std::vector<std::string> sample_names() {
  std::vector<std::string> names;
  const auto dir = testing::tensorboard_samples_dir();
  if (!dir) return names;
  for (const auto& entry : std::filesystem::directory_iterator(*dir / "expected")) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A JSON number as the reference writes them: NaN and the infinities as strings.
double number(const json::value& value) {
  if (value.is_string()) {
    const std::string_view text = value.as_string();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    ADD_FAILURE() << "not a number: " << text;
    return 0.0;
  }
  return value.to_number<double>();
}

bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

void expect_close(double actual, double expected, const std::string& what) {
  if (std::isnan(expected) || std::isinf(expected)) {
    EXPECT_TRUE(same_double(actual, expected)) << what << ": " << actual << " vs " << expected;
    return;
  }
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::abs(expected)))
      << what << ": " << actual << " vs " << expected;
}

std::string kind_of(TagKind kind) {
  return std::string(tag_kind_name(kind));
}

// One value against the reference's [step, wall_time, value] triple.
void expect_point(const ReadPoint& point, const json::array& expected, const std::string& kind,
                  const std::string& where) {
  ASSERT_EQ(expected.size(), 3U) << where;
  EXPECT_EQ(point.step, expected[0].to_number<std::int64_t>()) << where;
  EXPECT_TRUE(same_double(point.wall_time, number(expected[1])))
      << where << ": wall_time " << point.wall_time;
  const json::value& value = expected[2];
  if (kind == "scalar" && !value.is_object()) {
    ASSERT_EQ(point.reading.kind, TagKind::Scalar) << where;
    EXPECT_TRUE(same_double(point.reading.scalar, number(value)))
        << where << ": " << point.reading.scalar << " vs " << number(value);
    return;
  }
  if (kind != "histogram" || !value.is_object()) return;
  ASSERT_EQ(point.reading.kind, TagKind::Histogram) << where;
  const json::object& figures = value.as_object();
  const HistogramFigures& histogram = point.reading.histogram;
  if (figures.contains("sum_squares")) {  // a legacy HistogramProto
    expect_close(histogram.min, number(figures.at("min")), where + " min");
    expect_close(histogram.max, number(figures.at("max")), where + " max");
    expect_close(histogram.num, number(figures.at("num")), where + " num");
    expect_close(histogram.sum, number(figures.at("sum")), where + " sum");
    ASSERT_TRUE(histogram.sum_squares.has_value()) << where;
    expect_close(*histogram.sum_squares, number(figures.at("sum_squares")), where + " sum_squares");
    EXPECT_EQ(histogram.buckets, figures.at("buckets").to_number<std::size_t>()) << where;
  } else {  // a [k,3] tensor: min and max are the edges of the buckets that count something
    expect_close(histogram.num, number(figures.at("count")), where + " count");
    expect_close(histogram.min, number(figures.at("min_nonempty")), where + " min");
    expect_close(histogram.max, number(figures.at("max_nonempty")), where + " max");
    expect_close(histogram.mean(), number(figures.at("mean")), where + " mean");
    EXPECT_FALSE(histogram.sum_squares.has_value()) << where;
    EXPECT_EQ(histogram.buckets, figures.at("buckets").to_number<std::size_t>()) << where;
  }
}

void expect_tag(const ReadTag& read, const json::object& expected, const std::string& where) {
  const std::string kind(expected.at("kind").as_string());
  EXPECT_EQ(kind_of(read.kind), kind) << where;
  EXPECT_EQ(read.plugin_name, std::string_view(expected.at("plugin_name").as_string())) << where;
  std::set<std::string> kinds_seen;
  for (const auto& point : read.points) kinds_seen.insert(kind_of(point.reading.kind));
  std::set<std::string> expected_kinds;
  for (const auto& seen : expected.at("kinds_seen").as_array()) {
    expected_kinds.emplace(seen.as_string());
  }
  EXPECT_EQ(kinds_seen, expected_kinds) << where;
  const json::array& points = expected.at("points").as_array();
  ASSERT_EQ(read.points.size(), expected.at("count").to_number<std::size_t>()) << where;
  ASSERT_EQ(read.points.size(), points.size()) << where;
  EXPECT_EQ(read.points.front().step, expected.at("first_step").to_number<std::int64_t>()) << where;
  EXPECT_EQ(read.points.back().step, expected.at("last_step").to_number<std::int64_t>()) << where;
  for (std::size_t i = 0; i < points.size(); ++i) {
    expect_point(read.points[i], points[i].as_array(), kind, where + " value " + std::to_string(i));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The (file, offset) of every broken place the reference found, and how many Events did not
// parse (the reference gives no offsets for those).
std::pair<std::set<std::pair<std::string, std::uint64_t>>, std::uint64_t> expected_problems(
    const std::string& run, const json::object& expected_run) {
  std::set<std::pair<std::string, std::uint64_t>> places;
  std::uint64_t unparseable = 0;
  for (const auto& file_value : expected_run.at("files").as_array()) {
    const json::object& file = file_value.as_object();
    const std::string name(file.at("name").as_string());
    const std::string path = run == "." ? name : run + "/" + name;
    for (const auto& bad : file.at("bad_crc").as_array()) {
      places.emplace(path, bad.as_object().at("offset").to_number<std::uint64_t>());
    }
    if (const auto& tail = file.at("truncated_tail"); tail.is_object()) {
      places.emplace(path, tail.as_object().at("offset").to_number<std::uint64_t>());
    }
    unparseable += file.at("unparseable").to_number<std::uint64_t>();
  }
  return {places, unparseable};
}

class TensorBoardSampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TensorBoardSampleTest, ReadsWhatAnIndependentReaderFinds) {
  const auto dir = testing::tensorboard_samples_dir();
  ASSERT_TRUE(dir);
  const auto expected_path = *dir / "expected" / (GetParam() + ".json");
  const json::value expected =
      testing::parse_json_precisely(testing::read_text_file(expected_path), expected_path.string());
  const auto storage = open_storage((*dir / "logdirs" / GetParam()).string());
  CollectingSink sink;
  const SeriesJobRead read = read_series_job(*storage, sink, {}, tensorboard_series_format());

  const json::object& runs = expected.at("runs").as_object();
  std::vector<std::string> expected_runs;
  for (const auto& [run, value] : runs) expected_runs.emplace_back(run);
  std::sort(expected_runs.begin(), expected_runs.end());
  ASSERT_EQ(read.runs, expected_runs);

  std::set<std::pair<std::string, std::uint64_t>> places;
  std::uint64_t unparseable = 0;
  for (const auto& [run_key, run_value] : runs) {
    const std::string run(run_key);
    const json::object& expected_run = run_value.as_object();
    const json::object& tags = expected_run.at("tags").as_object();
    const auto& read_tags = sink.runs[run];
    std::set<std::string> names;
    std::set<std::string> expected_names;
    for (const auto& [name, tag] : read_tags) names.insert(name);
    for (const auto& [name, tag] : tags) expected_names.emplace(name);
    EXPECT_EQ(names, expected_names) << "run " << run;
    for (const auto& [name, tag] : tags) {
      const auto found = read_tags.find(std::string(name));
      if (found == read_tags.end()) continue;
      expect_tag(found->second, tag.as_object(), "run " + run + " tag " + std::string(name));
    }
    auto [run_places, run_unparseable] = expected_problems(run, expected_run);
    places.merge(run_places);
    unparseable += run_unparseable;
  }

  std::set<std::pair<std::string, std::uint64_t>> found_places;
  std::uint64_t found_unparseable = 0;
  for (const auto& problem : read.problems) {
    EXPECT_NE(problem.message.find(problem.file), std::string::npos) << problem.message;
    EXPECT_NE(problem.message.find("offset " + std::to_string(problem.offset)), std::string::npos)
        << problem.message;
    if (problem.message.find("not an Event") != std::string::npos) {
      ++found_unparseable;
    } else {
      found_places.emplace(problem.file, problem.offset);
    }
  }
  EXPECT_EQ(found_places, places);
  EXPECT_EQ(found_unparseable, unparseable);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Samples, TensorBoardSampleTest, ::testing::ValuesIn(sample_names()),
                         test_name);

// Without the samples the suite above has no instance at all: this says so, and fails in CI.
TEST(TensorBoardSamples, AreThere) {
  const auto dir = testing::tensorboard_samples_dir();
  if (!dir) GTEST_SKIP() << "tensorboard-samples not found beside the project";
  EXPECT_GE(sample_names().size(), 7U);
}

}  // namespace
}  // namespace rulestream
