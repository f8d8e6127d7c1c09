#include "rules/support/unit_activity.hpp"

#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/support/real_values.hpp"
#include "rules/support/rule_text.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

std::optional<UnitActivity> measure_unit_activity(const TensorValue& value, double active_low,
                                                  double active_high, double threshold_inactivity) {
  const auto elements = real_values(value);
  if (!elements || elements->empty()) return std::nullopt;
  UnitActivity activity;
  const Shape& shape = value.shape();
  activity.samples = shape.size() >= 2 ? shape.front() : 1;
  activity.units = static_cast<std::int64_t>(elements->size()) / activity.samples;

  // Elements are in C order: sample s, unit u sits at s * units + u.
  std::vector<std::int64_t> active(static_cast<std::size_t>(activity.units), 0);
  for (std::size_t i = 0; i < elements->size(); ++i) {
    const double x = (*elements)[i];
    if (x > active_low && x < active_high) ++active[i % active.size()];
  }
  for (const std::int64_t count : active) {
    const double percent =
        static_cast<double>(count) * 100.0 / static_cast<double>(activity.samples);
    if (percent < threshold_inactivity) ++activity.inactive_units;
  }
  return activity;
}

std::vector<InactiveLayer> find_inactive_layers(const Trial& trial, std::int64_t step,
                                                const std::vector<std::string>& tensors,
                                                const ActiveRange& active_range,
                                                double threshold_inactivity,
                                                double threshold_layer) {
  std::vector<InactiveLayer> layers;
  for (const std::string& name : tensors) {
    const auto range = active_range(name);
    if (!range) continue;
    TensorValue value;
    try {
      value = trial.tensor(name).value(step);
    } catch (const TensorUnavailableForStep&) {
      continue;  // saved only as reductions at this step: no units to look at
    }
    const auto activity =
        measure_unit_activity(value, range->first, range->second, threshold_inactivity);
    if (!activity || activity->inactive_percent() <= threshold_layer) continue;
    layers.push_back({name, *activity});
    if (layers.size() == kMaxReportedTensors) break;
  }
  return layers;
}

}  // namespace rulestream
