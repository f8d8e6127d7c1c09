// Every job of tests/data/text-metrics (real files from public repositories, and files written
// here by real training in the layouts of Lightning, Hugging Face, stable-baselines3, mmengine
// and Keras) read as rulestream reads a folder of text metrics, against what an independent
// reader (read_expected.py: Python's csv and json modules) found in it: runs, series, every
// value with its step and time, files that are no metrics, rows cut short, bad lines.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sources/open/storage_factory.hpp"
#include "stages/metrics/metrics_runs.hpp"
#include "stages/series/series_reader.hpp"
#include "tests/support/precise_json.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;

const std::filesystem::path& samples_root() {
  static const std::filesystem::path root =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "data" /
      "text-metrics";
  return root;
}

struct Point {
  std::int64_t step = 0;
  double time = 0.0;
  double value = 0.0;
};

class Collected final : public SeriesValueSink {
 public:
  void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    points[tag.run][tag.name].push_back({step, wall_time, reading.scalar});
  }
  std::map<std::string, std::map<std::string, std::vector<Point>>> points;
};

// A number of the expected files: a JSON number, "NaN", "Infinity", "-Infinity", or null (no
// time).
double number_of(const json::value& value) {
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_string()) {
    const std::string_view text = value.as_string();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    ADD_FAILURE() << "unexpected string " << text;
    return 0.0;
  }
  return value.to_number<double>();
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

std::vector<std::string> sample_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(samples_root() / "expected")) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// How many of `problems` name `file` and contain `words`.
std::size_t count_problems(const std::vector<SeriesProblem>& problems, const std::string& file,
                           std::string_view words) {
  return static_cast<std::size_t>(
      std::count_if(problems.begin(), problems.end(), [&](const SeriesProblem& problem) {
        return problem.file == file && problem.message.find(words) != std::string::npos;
      }));
}

class TextMetricsSample : public ::testing::TestWithParam<std::string> {};

TEST(TextMetricsSamples, AreThere) {
  // Real files of every writer the format names, and the written ones.
  EXPECT_GE(sample_names().size(), 12U);
}

TEST_P(TextMetricsSample, IsReadValueForValueAsPythonReadsIt) {
  const std::string name = GetParam();
  const json::value expected = testing::parse_json_precisely(
      testing::read_text_file(samples_root() / "expected" / (name + ".json")), name);
  const auto storage = open_storage((samples_root() / "jobs" / name).string(), StorageOptions{});
  Collected collected;
  const SeriesJobRead read = read_series_job(*storage, collected, {}, text_metrics_series_format());

  // Files that are no metrics (a CSV without a step column): said, nothing read from them.
  std::set<std::string> ignored;
  for (const json::value& entry : expected.at("ignored").as_array()) {
    const std::string file(entry.at("file").as_string());
    ignored.insert(file);
    EXPECT_EQ(count_problems(read.problems, file, "no column is a step"), 1U) << file;
    EXPECT_EQ(collected.points.count(file), 0U) << file;
  }
  const json::object& runs = expected.at("runs").as_object();
  std::set<std::string> expected_runs;
  for (const auto& [run, _] : runs) expected_runs.insert(std::string(run));
  for (const std::string& run : read.runs) {
    EXPECT_TRUE(expected_runs.contains(run) || ignored.contains(run)) << "run " << run;
  }
  for (const auto& [run_key, run_value] : runs) {
    const std::string run(run_key);
    SCOPED_TRACE(name + ": run " + run);
    EXPECT_NE(std::find(read.runs.begin(), read.runs.end(), run), read.runs.end());
    const json::object& run_doc = run_value.as_object();
    const std::string file(run_doc.at("file").as_string());
    const auto& tags = run_doc.at("tags").as_object();
    const auto& got = collected.points[run];
    std::set<std::string> expected_tags;
    for (const auto& [tag, _] : tags) expected_tags.insert(std::string(tag));
    std::set<std::string> got_tags;
    for (const auto& [tag, _] : got) got_tags.insert(tag);
    EXPECT_EQ(got_tags, expected_tags);
    for (const auto& [tag_key, tag_value] : tags) {
      const std::string tag(tag_key);
      const json::array& points = tag_value.at("points").as_array();
      const auto found = got.find(tag);
      if (found == got.end()) continue;  // said above
      ASSERT_EQ(found->second.size(), points.size()) << "tag " << tag;
      for (std::size_t i = 0; i < points.size(); ++i) {
        const json::array& point = points[i].as_array();
        const Point& mine = found->second[i];
        EXPECT_EQ(mine.step, point[0].to_number<std::int64_t>()) << tag << " #" << i;
        EXPECT_TRUE(same(mine.time, number_of(point[1])))
            << tag << " #" << i << ": time " << mine.time;
        EXPECT_TRUE(same(mine.value, number_of(point[2])))
            << tag << " #" << i << ": value " << mine.value;
      }
    }
    // A last row cut short, rows without a step and lines that are no JSON: said (the first
    // five of each kind one by one, then counted in the fifth).
    if (const json::value& cut = run_doc.at("cut_short_tail"); !cut.is_null()) {
      const std::uint64_t offset = cut.at("offset").to_number<std::uint64_t>();
      EXPECT_EQ(count_problems(read.problems, file, "at offset " + std::to_string(offset) + ":"),
                1U)
          << "a last row cut short at offset " << offset;
    }
    const auto said = [](std::int64_t count) { return std::min<std::int64_t>(count, 5); };
    EXPECT_EQ(static_cast<std::int64_t>(count_problems(read.problems, file, "no JSON object")),
              said(run_doc.at("bad_lines").to_number<std::int64_t>()));
    EXPECT_EQ(static_cast<std::int64_t>(count_problems(read.problems, file, "no whole number")),
              said(run_doc.at("rows_without_step").to_number<std::int64_t>()));
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, TextMetricsSample, ::testing::ValuesIn(sample_names()),
                         [](const ::testing::TestParamInfo<std::string>& sample) {
                           std::string id = sample.param;
                           std::replace_if(
                               id.begin(), id.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return id;
                         });

}  // namespace
}  // namespace rulestream
