#include "tests/support/smdebug_expected.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include "tests/support/precise_json.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {

namespace json = boost::json;

std::vector<SampleTrial> sample_trials_or_placeholder() {
  std::vector<SampleTrial> trials;
  if (const auto samples = samples_dir()) {
    for (const auto& entry : std::filesystem::directory_iterator(*samples / "trials")) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      trials.push_back({name, entry.path(), *samples / "expected" / (name + ".json")});
    }
  }
  std::sort(trials.begin(), trials.end(),
            [](const SampleTrial& a, const SampleTrial& b) { return a.name < b.name; });
  if (trials.empty()) trials.push_back({});
  return trials;
}

std::string sample_test_name(const SampleTrial& sample) {
  if (sample.name.empty()) return "NoSamples";
  std::string name = sample.name;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name;
}

std::shared_ptr<const LoadedSample> load_sample(const SampleTrial& sample) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const LoadedSample>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(sample.name); it != cache.end()) return it->second;

  if (!std::filesystem::exists(sample.expected_file)) {
    throw std::runtime_error("trial " + sample.name + " has no expected file " +
                             sample.expected_file.string());
  }
  const std::string text = read_text_file(sample.expected_file);
  json::value parsed = parse_json_precisely(text, sample.expected_file.string());
  if (!parsed.is_object()) {
    throw std::runtime_error(sample.expected_file.string() + ": not a JSON object");
  }
  auto loaded = std::make_shared<LoadedSample>(LoadedSample{
      sample.name, Trial::open(sample.trial_dir.string()), std::move(parsed.get_object())});
  cache.emplace(sample.name, loaded);
  return loaded;
}

const json::value& member(const json::object& object, std::string_view key,
                          std::string_view where) {
  const json::value* found = object.if_contains(key);
  if (found == nullptr) {
    throw std::runtime_error("expected file: " + std::string(where) + " has no key '" +
                             std::string(key) + "'");
  }
  return *found;
}

const json::object& as_object(const json::value& value, std::string_view where) {
  if (!value.is_object()) {
    throw std::runtime_error("expected file: " + std::string(where) +
                             " is not an object: " + json_text(value));
  }
  return value.get_object();
}

const json::array& as_array(const json::value& value, std::string_view where) {
  if (!value.is_array()) {
    throw std::runtime_error("expected file: " + std::string(where) +
                             " is not an array: " + json_text(value));
  }
  return value.get_array();
}

const json::object* find_object(const json::object& object, std::string_view key) {
  const json::value* found = object.if_contains(key);
  return found != nullptr && found->is_object() ? &found->get_object() : nullptr;
}

double json_double(const json::value& value, std::string_view where) {
  if (value.is_double()) return value.get_double();
  if (value.is_int64()) return static_cast<double>(value.get_int64());
  if (value.is_uint64()) return static_cast<double>(value.get_uint64());
  if (value.is_bool()) return value.get_bool() ? 1.0 : 0.0;
  if (value.is_string()) {
    const std::string_view text = value.get_string();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  throw std::runtime_error("expected file: " + std::string(where) +
                           " is not a number: " + json_text(value));
}

std::int64_t json_int(const json::value& value, std::string_view where) {
  if (value.is_int64()) return value.get_int64();
  if (value.is_uint64() && value.get_uint64() <= std::numeric_limits<std::int64_t>::max()) {
    return static_cast<std::int64_t>(value.get_uint64());
  }
  throw std::runtime_error("expected file: " + std::string(where) +
                           " is not an int64: " + json_text(value));
}

std::string json_string(const json::value& value, std::string_view where) {
  if (!value.is_string()) {
    throw std::runtime_error("expected file: " + std::string(where) +
                             " is not a string: " + json_text(value));
  }
  return std::string(value.get_string());
}

std::vector<std::string> json_strings(const json::value& value, std::string_view where) {
  std::vector<std::string> result;
  for (const auto& element : as_array(value, where)) result.push_back(json_string(element, where));
  return result;
}

std::vector<std::int64_t> json_ints(const json::value& value, std::string_view where) {
  std::vector<std::int64_t> result;
  for (const auto& element : as_array(value, where)) result.push_back(json_int(element, where));
  return result;
}

std::optional<std::string> json_error(const json::value& value) {
  if (!value.is_object()) return std::nullopt;
  const json::value* error = value.get_object().if_contains("error");
  if (error == nullptr || !error->is_string()) return std::nullopt;
  return std::string(error->get_string());
}

std::string json_text(const json::value& value) {
  return json::serialize(value);
}

}  // namespace rulestream::testing
