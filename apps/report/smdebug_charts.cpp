#include "apps/report/smdebug_charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "apps/report/chart_lines.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/mode.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

constexpr ReductionKey kAbsMean{Reduction::Mean, true};
constexpr ReductionKey kMax{Reduction::Max, false};

std::vector<std::string> collection_members(const Trial& trial, const std::string& collection) {
  if (!trial.collections().contains(collection)) return {};
  return trial.tensor_names({.collection = collection});
}

// The losses: the "losses" collection, else (a hook that declared none) tensors named so.
std::vector<std::string> loss_tensors(const Trial& trial) {
  std::vector<std::string> names = collection_members(trial, "losses");
  if (names.empty()) names = trial.tensor_names({.regex = {"(?i)loss"}});
  return names;
}

// The loss at a step: the mean of the workers' values (one worker: its value).
std::optional<double> loss_at(const Tensor& tensor, std::int64_t step) {
  try {
    return tensor.combined_reduction(step, Reduction::Mean).as_double();
  } catch (const RulestreamError&) {
  }
  try {
    return tensor.reduction_value(step, Reduction::Mean).as_double();
  } catch (const RulestreamError&) {
    return std::nullopt;
  }
}

Chart loss_chart(const Trial& trial, const std::string& name,
                 std::span<const std::int64_t> keep_steps) {
  const Tensor tensor = trial.tensor(name);
  std::map<Mode, std::vector<SeriesPoint>> by_mode;
  for (const std::int64_t step : tensor.steps(Mode::Global, true)) {
    const auto value = loss_at(tensor, step);
    if (!value) continue;
    by_mode[trial.mode(step).value_or(Mode::Global)].push_back({step, *value});
  }
  Chart chart{.group = "losses", .title = name, .marks_firings = true};
  for (const auto& [mode, points] : by_mode) {
    chart.lines.push_back(
        downsampled_line(std::string(mode_name(mode)), ChartLine::Kind::Line, points, keep_steps));
  }
  return chart;
}

// One worker's figures at a step: from its saved value, else from the reductions it saved.
struct WorkerFigures {
  std::optional<double> abs_mean;
  std::optional<double> max;
  std::optional<std::int64_t> non_finite;
};

WorkerFigures worker_figures(const Tensor& tensor, std::int64_t step, const std::string& worker) {
  WorkerFigures figures;
  try {
    const ReductionKey keys[] = {kAbsMean, kMax};
    const ReductionSet set = tensor.value_reductions(keys, step, Mode::Global, worker);
    if (const auto scalar = set.get(kAbsMean)) figures.abs_mean = scalar->as_double();
    if (const auto scalar = set.get(kMax)) figures.max = scalar->as_double();
    if (const auto counts = set.counts(); counts && counts->nans && counts->infs) {
      figures.non_finite = *counts->nans + *counts->infs;
    }
    return figures;
  } catch (const RulestreamError&) {
  }
  try {
    const auto saved = tensor.reduction_values(step, Mode::Global, worker);
    if (const auto found = saved.find(kAbsMean); found != saved.end()) {
      figures.abs_mean = found->second.as_double();
    }
    if (const auto found = saved.find(kMax); found != saved.end()) {
      figures.max = found->second.as_double();
    }
  } catch (const RulestreamError&) {
  }
  return figures;
}

// Firings are not kept on a layer's curves (only on the losses): kept there, a rule firing at
// every step of a long job would keep every point of every curve.
Chart layer_chart(const Trial& trial, const std::string& group, const std::string& name) {
  const Tensor tensor = trial.tensor(name);
  std::vector<SeriesPoint> abs_mean, max, non_finite, spread_low, spread_high;
  bool several_workers = false;
  for (const std::int64_t step : tensor.steps(Mode::Global, true)) {
    const std::vector<std::string> workers = tensor.workers(step);
    std::optional<std::int64_t> bad;
    double low = std::numeric_limits<double>::infinity();
    double high = -std::numeric_limits<double>::infinity();
    bool any_abs_mean = false;
    for (const auto& worker : workers) {
      const WorkerFigures figures = worker_figures(tensor, step, worker);
      if (figures.non_finite) bad = bad.value_or(0) + *figures.non_finite;
      if (figures.abs_mean) {
        // NaN compares false both ways: a worker's NaN makes the band's edge NaN, a gap.
        low = std::isnan(*figures.abs_mean) ? *figures.abs_mean : std::min(low, *figures.abs_mean);
        high =
            std::isnan(*figures.abs_mean) ? *figures.abs_mean : std::max(high, *figures.abs_mean);
        any_abs_mean = true;
      }
    }
    try {
      const ReductionSet whole = tensor.combined_reductions(step);
      if (const auto scalar = whole.get(kAbsMean)) abs_mean.push_back({step, scalar->as_double()});
      if (const auto scalar = whole.get(kMax)) max.push_back({step, scalar->as_double()});
    } catch (const RulestreamError&) {
      // Listed but unreadable at this step (a worker's record the job could not keep): the
      // reading problem is in the job's problems; the curve has a gap.
    }
    if (bad) non_finite.push_back({step, static_cast<double>(*bad)});
    if (workers.size() > 1 && any_abs_mean) {
      several_workers = true;
      spread_low.push_back({step, low});
      spread_high.push_back({step, high});
    }
  }
  Chart chart{.group = group, .title = name};
  chart.lines.push_back(downsampled_line("abs_mean", ChartLine::Kind::Line, abs_mean, {}));
  chart.lines.push_back(downsampled_line("max", ChartLine::Kind::Line, max, {}));
  chart.lines.push_back(
      downsampled_line("NaN+Inf elements", ChartLine::Kind::Count, non_finite, {}));
  if (several_workers) {
    for (auto& line : band_lines("workers' abs_mean", spread_low, spread_high, {})) {
      chart.lines.push_back(std::move(line));
    }
  }
  return chart;
}

}  // namespace

std::vector<Chart> smdebug_charts(const Trial& trial, std::span<const std::int64_t> keep_steps) {
  std::vector<Chart> charts;
  for (const auto& name : loss_tensors(trial)) {
    charts.push_back(loss_chart(trial, name, keep_steps));
  }
  for (const std::string group : {"gradients", "weights", "biases"}) {
    for (const auto& name : collection_members(trial, group)) {
      charts.push_back(layer_chart(trial, group, name));
    }
  }
  return charts;
}

}  // namespace rulestream
