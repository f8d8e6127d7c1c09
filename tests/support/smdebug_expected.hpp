#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "trial/api/trial.hpp"

namespace rulestream::testing {

// One trial of smdebug-samples/trials and the file holding what smdebug reported for it
// (expected/<name>.json, documented in smdebug-samples/README.md).
struct SampleTrial {
  std::string name;
  std::filesystem::path trial_dir;
  std::filesystem::path expected_file;
};

// Every folder under samples/trials, sorted by name. When the samples are absent, a single
// entry with an empty name, so that parameterised suites still instantiate and can
// GTEST_SKIP with a clear message.
std::vector<SampleTrial> sample_trials_or_placeholder();

// A GoogleTest parameter name for the trial ("pt-mlp-basic" -> "pt_mlp_basic").
std::string sample_test_name(const SampleTrial& sample);

inline void PrintTo(const SampleTrial& sample, std::ostream* out) {
  *out << sample.name;
}

// The opened trial and its parsed expected file. Loaded once per process and shared by every
// test of the trial; the Trial handle is thread-safe and the JSON is never modified.
struct LoadedSample {
  std::string name;
  Trial trial;
  boost::json::object expected;
};
std::shared_ptr<const LoadedSample> load_sample(const SampleTrial& sample);

// Accessors that name the missing key when an expected file does not have the documented
// shape (std::runtime_error): a malformed expected file must fail the test, not skip checks.
const boost::json::value& member(const boost::json::object& object, std::string_view key,
                                 std::string_view where);
const boost::json::object& as_object(const boost::json::value& value, std::string_view where);
const boost::json::array& as_array(const boost::json::value& value, std::string_view where);
const boost::json::object* find_object(const boost::json::object& object, std::string_view key);

// A number as Python's json module wrote it, with smdebug-samples' spellings of the
// non-finite floats: the strings "NaN", "Infinity", "-Infinity".
double json_double(const boost::json::value& value, std::string_view where);
std::int64_t json_int(const boost::json::value& value, std::string_view where);
std::string json_string(const boost::json::value& value, std::string_view where);
std::vector<std::string> json_strings(const boost::json::value& value, std::string_view where);
std::vector<std::int64_t> json_ints(const boost::json::value& value, std::string_view where);

// "X" for an {"error": "X"} object (what smdebug raised instead of answering), else nullopt.
std::optional<std::string> json_error(const boost::json::value& value);

// Compact JSON text, for failure messages.
std::string json_text(const boost::json::value& value);

}  // namespace rulestream::testing
