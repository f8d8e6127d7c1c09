#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/tensor_value.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// How many units (neurons) of a layer have stopped responding, for DeadRelu and
// SaturatedActivation. The tensor holds one batch: samples along the first axis, and every
// position of the remaining axes is a unit (a feature, or a channel at a pixel). A 0-d or 1-d
// tensor is a single sample. A unit is active for a sample when its element lies strictly
// inside (active_low, active_high) (NaN never does); it is inactive when it was active for
// fewer than `threshold_inactivity` percent of the samples.
struct UnitActivity {
  std::int64_t units = 0;
  std::int64_t samples = 0;
  std::int64_t inactive_units = 0;

  double inactive_percent() const {
    return units == 0 ? 0.0
                      : static_cast<double>(inactive_units) * 100.0 / static_cast<double>(units);
  }
};

// nullopt for strings, complex values and empty tensors.
std::optional<UnitActivity> measure_unit_activity(const TensorValue& value, double active_low,
                                                  double active_high, double threshold_inactivity);

// A layer whose inactive units are more than threshold_layer percent of its units.
struct InactiveLayer {
  std::string tensor;
  UnitActivity activity;
};

// The interval (low, high) in which a tensor's units count as active; nullopt skips the tensor.
using ActiveRange = std::function<std::optional<std::pair<double, double>>(const std::string&)>;

// The layers among `tensors` (saved at `step`; those saved only as reductions are skipped)
// with more than threshold_layer percent inactive units, at most kMaxReportedTensors of them.
std::vector<InactiveLayer> find_inactive_layers(const Trial& trial, std::int64_t step,
                                                const std::vector<std::string>& tensors,
                                                const ActiveRange& active_range,
                                                double threshold_inactivity,
                                                double threshold_layer);

}  // namespace rulestream
