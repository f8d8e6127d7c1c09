#pragma once

// Which column of a CSV log (or key of a JSON-lines record) is the step, which the time, and
// what the time means. Chosen by name, in priority order, case-insensitively, as the writers
// name them (docs/text-metrics.md):
// - step: step, global_step, _step (W&B), iteration, iter, time/total_timesteps
//   (stable-baselines3), epoch (Keras' CSVLogger, Ultralytics);
// - time, seconds since the epoch: wall_time, timestamp, _timestamp;
// - time, seconds since the run started: time/time_elapsed (stable-baselines3), _runtime (W&B),
//   elapsed, and in CSV logs time (Ultralytics). In JSON lines "time" is not a time: OpenMMLab
//   writes the seconds an iteration took there, a series like any other.
// Every other column is a series.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

enum class MetricsTimeKind : unsigned char { SinceEpoch, SinceStart };

struct MetricsKeys {
  std::optional<std::size_t> step;  // index into the names
  std::optional<std::size_t> time;
  MetricsTimeKind time_kind = MetricsTimeKind::SinceEpoch;
};

// For a CSV header (`csv` true) or a JSON-lines record's keys.
MetricsKeys choose_metrics_keys(const std::vector<std::string>& names, bool csv);

// The step names, for messages: "step, global_step, ...".
std::string metrics_step_names();

}  // namespace rulestream
