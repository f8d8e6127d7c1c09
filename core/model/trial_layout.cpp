#include "core/model/trial_layout.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <string>

namespace rulestream {
namespace {

// Python's format(n, "0<width>d") for the non-negative numbers smdebug puts in file names.
void append_padded(std::string& out, std::int64_t number, std::size_t width) {
  if (number < 0) {
    throw std::invalid_argument("trial layout: step " + std::to_string(number) +
                                " is negative; smdebug's steps start at 0");
  }
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), number);
  const auto count = static_cast<std::size_t>(result.ptr - digits.data());
  if (count < width) out.append(width - count, '0');
  out.append(digits.data(), count);
}

constexpr std::size_t kStepDigits = 12;
constexpr std::size_t kBucketDigits = 9;
constexpr std::string_view kCollectionsSuffix = "_collections";

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Matches a file name against `(\d+)_(.+)\.(json|csv|tfevents)$`.
std::optional<StepFileName> match_step_name(std::string_view name) {
  std::size_t digits = 0;
  while (digits < name.size() && is_digit(name[digits])) ++digits;
  if (digits == 0 || digits >= name.size() || name[digits] != '_') return std::nullopt;
  std::string_view worker = name.substr(digits + 1);
  bool has_extension = false;
  for (const std::string_view extension : {".json", ".csv", ".tfevents"}) {
    if (worker.ends_with(extension)) {
      worker.remove_suffix(extension.size());
      has_extension = true;
      break;
    }
  }
  if (!has_extension || worker.empty()) return std::nullopt;
  StepFileName parsed;
  const auto result = std::from_chars(name.data(), name.data() + digits, parsed.step);
  if (result.ec != std::errc()) return std::nullopt;  // more digits than an int64 holds
  parsed.worker = worker;
  return parsed;
}

// Matches `(.+)_collections.(json|ts)` from the start of `tail` (not anchored at its end, as
// re.match is not); the group is greedy, so the last workable "_collections" wins.
std::optional<std::string> match_collections_name(std::string_view tail) {
  for (std::size_t at = tail.rfind(kCollectionsSuffix); at != std::string_view::npos && at >= 1;
       at = tail.rfind(kCollectionsSuffix, at - 1)) {
    const std::size_t any_char = at + kCollectionsSuffix.size();
    if (any_char >= tail.size()) continue;
    const std::string_view extension = tail.substr(any_char + 1);
    if (extension.starts_with("json") || extension.starts_with("ts")) {
      return std::string(tail.substr(0, at));
    }
  }
  return std::nullopt;
}

// Python's re.sub(r":\d+", "", name): every ":<digits>", not only a trailing one.
std::string strip_output_indices(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    if (name[i] == ':' && i + 1 < name.size() && is_digit(name[i + 1])) {
      ++i;
      while (i < name.size() && is_digit(name[i])) ++i;
      continue;
    }
    out += name[i++];
  }
  return out;
}

}  // namespace

std::string event_file_path(std::int64_t global_step, std::string_view worker) {
  std::string path(kEventsDir);
  append_padded(path, global_step, kStepDigits);
  path += '/';
  append_padded(path, global_step, kStepDigits);
  path += '_';
  path += worker;
  path += ".tfevents";
  return path;
}

std::string index_bucket_path(std::int64_t global_step) {
  std::string path(kIndexDir);
  append_padded(path, global_step < 0 ? global_step : global_step / kStepsPerIndexBucket,
                kBucketDigits);
  path += '/';
  return path;
}

std::string index_file_path(std::int64_t global_step, std::string_view worker) {
  std::string path = index_bucket_path(global_step);
  append_padded(path, global_step, kStepDigits);
  path += '_';
  path += worker;
  path += ".json";
  return path;
}

std::string collections_file_path(std::string_view worker) {
  std::string path(kCollectionsDir);
  path += "000000000/";
  path += worker;
  path += kCollectionsSuffix;
  path += ".json";
  return path;
}

std::optional<StepFileName> parse_step_file_name(std::string_view path) {
  // '.' never matches a newline in Python's re; no real trial file has one in its name.
  if (path.find('\n') != std::string_view::npos) return std::nullopt;
  // `.+/` is greedy: the last '/' whose remainder matches wins, then earlier ones. `.+` needs
  // at least one character, so a '/' at position 0 does not count.
  for (std::size_t slash = path.rfind('/'); slash != std::string_view::npos && slash >= 1;
       slash = path.rfind('/', slash - 1)) {
    if (auto parsed = match_step_name(path.substr(slash + 1))) return parsed;
  }
  return std::nullopt;
}

std::optional<std::string> parse_collections_worker(std::string_view path) {
  if (path.find('\n') != std::string_view::npos) return std::nullopt;
  // smdebug matches absolute paths; ours are relative to the trial root, which is a folder.
  std::string full;
  if (!path.starts_with('/')) {
    full = "/";
    full += path;
    path = full;
  }
  constexpr std::string_view kMarker = "/collections/";
  // Backtracking order of `.*/collections/.+/(.+)_collections.(json|ts)`: the outer greedy
  // groups change slowest, so loop over them outermost.
  for (std::size_t marker = path.rfind(kMarker); marker != std::string_view::npos;
       marker = marker == 0 ? std::string_view::npos : path.rfind(kMarker, marker - 1)) {
    const std::string_view rest = path.substr(marker + kMarker.size());
    for (std::size_t slash = rest.rfind('/'); slash != std::string_view::npos && slash >= 1;
         slash = rest.rfind('/', slash - 1)) {
      if (auto worker = match_collections_name(rest.substr(slash + 1))) return worker;
    }
  }
  return std::nullopt;
}

std::string reduction_tensor_name(std::string_view tensor, ReductionKey key) {
  std::string name(kReductionTensorPrefix);
  name += reduction_key_name(key);
  name += '/';
  name += strip_output_indices(tensor);
  return name;
}

std::optional<std::pair<std::string, ReductionKey>> parse_reduction_tensor_name(
    std::string_view name) {
  if (!name.starts_with(kReductionTensorPrefix)) return std::nullopt;
  name.remove_prefix(kReductionTensorPrefix.size());
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos || slash + 1 == name.size()) return std::nullopt;
  const std::string_view reduction = name.substr(0, slash);
  const auto key = reduction_key_from_name(reduction);
  // Only the spelling smdebug writes ("l2", "abs_mean"), not the config's "l2_norm".
  if (!key || reduction_key_name(*key) != reduction) return std::nullopt;
  return std::pair{std::string(name.substr(slash + 1)), *key};
}

}  // namespace rulestream
