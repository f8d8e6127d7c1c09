#include "stages/metrics/metrics_keys.hpp"

#include <algorithm>
#include <array>

namespace rulestream {
namespace {

constexpr std::array<std::string_view, 7> kStepNames{
    "step", "global_step", "_step", "iteration", "iter", "time/total_timesteps", "epoch"};
constexpr std::array<std::string_view, 3> kSinceEpochNames{"wall_time", "timestamp", "_timestamp"};
constexpr std::array<std::string_view, 4> kSinceStartNames{"time/time_elapsed", "_runtime",
                                                           "elapsed", "time"};

bool same_name(std::string_view a, std::string_view lowercase) {
  return a.size() == lowercase.size() &&
         std::equal(a.begin(), a.end(), lowercase.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? static_cast<char>(x - 'A' + 'a') : x) == y;
         });
}

template <std::size_t N>
std::optional<std::size_t> first_named(const std::vector<std::string>& names,
                                       const std::array<std::string_view, N>& wanted,
                                       std::optional<std::size_t> besides) {
  for (const std::string_view name : wanted) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i != besides && same_name(names[i], name)) return i;
    }
  }
  return std::nullopt;
}

}  // namespace

MetricsKeys choose_metrics_keys(const std::vector<std::string>& names, bool csv) {
  MetricsKeys keys;
  keys.step = first_named(names, kStepNames, std::nullopt);
  keys.time = first_named(names, kSinceEpochNames, keys.step);
  if (!keys.time) {
    // "time" only in CSV logs (Ultralytics' seconds since the start): in JSON lines it is
    // OpenMMLab's seconds per iteration.
    const std::array<std::string_view, 3> json_names{kSinceStartNames[0], kSinceStartNames[1],
                                                     kSinceStartNames[2]};
    keys.time = csv ? first_named(names, kSinceStartNames, keys.step)
                    : first_named(names, json_names, keys.step);
    if (keys.time) keys.time_kind = MetricsTimeKind::SinceStart;
  }
  return keys;
}

std::string metrics_step_names() {
  std::string names;
  for (const std::string_view name : kStepNames) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

}  // namespace rulestream
