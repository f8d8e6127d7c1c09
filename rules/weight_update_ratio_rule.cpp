#include "rules/weight_update_ratio_rule.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "pipeline/exceptions.hpp"
#include "pipeline/tensor.hpp"
#include "rules/real_values.hpp"
#include "rules/rule_text.hpp"
#include "rules/tensor_selection.hpp"
#include "rules/value_reads.hpp"

namespace rulestream {
namespace {

const TensorSelection& weights() {
  static const TensorSelection selection{.collections = {"weights"}};
  return selection;
}

struct UpdateNorms {
  double update = 0.0;   // ||current - previous||_2
  double weights = 0.0;  // ||previous||_2
};

// Both sums in double, element by element in C order, whatever the dtype: loads are the only
// thing that differ between the fast paths and the general one.
template <typename LoadBefore, typename LoadAfter>
UpdateNorms sum_norms(std::size_t count, const LoadBefore& before, const LoadAfter& after) {
  double update = 0.0;
  double weights = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double b = before(i);
    const double delta = after(i) - b;
    update += delta * delta;
    weights += b * b;
  }
  return UpdateNorms{std::sqrt(update), std::sqrt(weights)};
}

// Element i of a value whose dtype is T, widened to double, read straight from its bytes: float32
// and float64 weights need no vector of doubles.
template <typename T>
auto widening_loader(const TensorValue& value) {
  return [view = value.elements<T>()](std::size_t i) { return static_cast<double>(view[i]); };
}

std::optional<UpdateNorms> update_norms(const TensorValue& previous, const TensorValue& current) {
  if (previous.shape() != current.shape()) return std::nullopt;
  const auto count = static_cast<std::size_t>(current.size());
  if (previous.dtype() == DType::Float32 && current.dtype() == DType::Float32) {
    return sum_norms(count, widening_loader<float>(previous), widening_loader<float>(current));
  }
  if (previous.dtype() == DType::Float64 && current.dtype() == DType::Float64) {
    return sum_norms(count, widening_loader<double>(previous), widening_loader<double>(current));
  }
  const auto before = real_values(previous);
  const auto after = real_values(current);
  if (!before || !after) return std::nullopt;
  return sum_norms(
      after->size(), [&](std::size_t i) { return (*before)[i]; },
      [&](std::size_t i) { return (*after)[i]; });
}

// The weights of one read at most (their values and the previous step's are held together).
constexpr std::size_t kWeightsAtATime = 256;

// The previous value of each update (chunk position, previous step), nullopt where there is
// none: one values_at per distinct previous step (nearly always one: the step before).
std::vector<std::optional<TensorValue>> previous_values(
    const Trial& trial, std::span<const TensorRef> chunk,
    const std::vector<std::pair<std::size_t, std::int64_t>>& updates) {
  std::vector<std::optional<TensorValue>> values(updates.size());
  std::vector<bool> read(updates.size(), false);
  std::vector<TensorRef> refs;
  std::vector<std::size_t> positions;
  for (std::size_t first = 0; first < updates.size(); ++first) {
    if (read[first]) continue;
    const std::int64_t previous_step = updates[first].second;
    refs.clear();
    positions.clear();
    for (std::size_t u = first; u < updates.size(); ++u) {
      if (read[u] || updates[u].second != previous_step) continue;
      read[u] = true;
      refs.push_back(chunk[updates[u].first]);
      positions.push_back(u);
    }
    auto found = trial.values_at(refs, previous_step);
    for (std::size_t i = 0; i < found.size(); ++i) values[positions[i]] = std::move(found[i]);
  }
  return values;
}

}  // namespace

WeightUpdateRatioRule::WeightUpdateRatioRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options) {}

RuleSpec WeightUpdateRatioRule::spec() {
  RuleSpec spec;
  spec.name = "WeightUpdateRatio";
  spec.aliases = {"weight_update_ratio"};
  spec.description = "weight updates too large or too small relative to the weights";
  spec.parameters = {
      {"num_steps", "int", "",
       "compare with a saved step at most this many TRAIN steps back (unset: the previous one)"},
      {"large_threshold", "float", "10.0", "fires when ||update|| / ||weights|| is above this"},
      {"small_threshold", "float", "0.00000001",
       "fires when ||update|| / ||weights|| is below this"},
      {"epsilon", "float", "0.000000001", "added to ||weights|| so the ratio never divides by 0"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("WeightUpdateRatio", parameters);
    Options options;
    options.num_steps = reader.optional_integer("num_steps");
    if (options.num_steps && *options.num_steps < 1) {
      throw reader.invalid("num_steps", "must be at least 1");
    }
    options.large_threshold = reader.number("large_threshold", options.large_threshold);
    options.small_threshold = reader.number("small_threshold", options.small_threshold);
    if (options.small_threshold < 0.0) {
      throw reader.invalid("small_threshold", "must not be negative");
    }
    if (options.large_threshold <= options.small_threshold) {
      throw reader.invalid("large_threshold", "must be greater than small_threshold \"" +
                                                  format_figure(options.small_threshold) + "\"");
    }
    options.epsilon = reader.number("epsilon", options.epsilon);
    if (options.epsilon < 0.0) throw reader.invalid("epsilon", "must not be negative");
    reader.finish();
    return std::unique_ptr<Rule>(new WeightUpdateRatioRule(context.base_trial, options));
  };
  return spec;
}

bool WeightUpdateRatioRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  if (!is_training_step(trial, step)) return false;
  const std::int64_t train_step = trial.mode_step(step).value_or(step);
  Finding finding;
  std::string first_detail;
  // Every weight is looked at, even past kMaxReportedTensors, so that each one's previous saved
  // step stays known. Values are read a few MiB at a time (Trial::values_at: one read per event
  // file rather than one per value), the previous ones by the step they were saved at.
  const std::vector<TensorRef> refs = weights().tensor_refs(trial, step);
  for (std::size_t done = 0; done < refs.size();) {
    const std::span<const TensorRef> chunk =
        std::span(refs).subspan(done, std::min(refs.size() - done, kWeightsAtATime));
    const auto current = trial.values_at(chunk, step, Mode::Global, kValueBytesAtATime);
    // (position in chunk, previous saved step) of each weight with an update to measure.
    std::vector<std::pair<std::size_t, std::int64_t>> updates;
    for (std::size_t k = 0; k < current.size(); ++k) {
      if (!current[k]) continue;  // saved only as reductions at this step: no update to measure
      const Tensor tensor = trial.tensor(chunk[k]);
      const std::vector<std::int64_t> previous_steps = history_.before(trial, tensor, step);
      history_.record(tensor, step);
      if (previous_steps.empty()) continue;
      const std::int64_t previous_step = previous_steps.back();
      const std::int64_t previous_train_step =
          trial.mode_step(previous_step).value_or(previous_step);
      if (options_.num_steps && train_step - previous_train_step > *options_.num_steps) continue;
      updates.emplace_back(k, previous_step);
    }
    const std::vector<std::optional<TensorValue>> previous = previous_values(trial, chunk, updates);
    for (std::size_t u = 0; u < updates.size(); ++u) {
      if (!previous[u]) continue;
      const auto [k, previous_step] = updates[u];
      const std::string& name = chunk[k].name();
      const auto norms = update_norms(*previous[u], *current[k]);
      if (!norms) continue;
      const double ratio = norms->update / (norms->weights + options_.epsilon);
      const bool too_large = ratio > options_.large_threshold;
      const bool too_small = ratio < options_.small_threshold;
      if ((!too_large && !too_small) || finding.tensors.size() == kMaxReportedTensors) continue;

      finding.tensors.push_back(name);
      finding.figures.push_back({"update_ratio", ratio, name});
      finding.figures.push_back({"update_norm", norms->update, name});
      finding.figures.push_back({"weight_norm", norms->weights, name});
      finding.figures.push_back({"previous_step", static_cast<double>(previous_step), name});
      if (first_detail.empty()) {
        first_detail =
            " update ratio " + format_figure(ratio) + " (||update|| " +
            format_figure(norms->update) + " / ||weights|| " + format_figure(norms->weights) +
            " from step " + std::to_string(previous_step) + " to " + std::to_string(step) + ")" +
            (too_large ? " > large_threshold " + format_figure(options_.large_threshold)
                       : " < small_threshold " + format_figure(options_.small_threshold));
      }
    }
    done += current.size();
  }
  if (finding.tensors.empty()) return false;

  finding.figures.push_back({"large_threshold", options_.large_threshold, std::nullopt});
  finding.figures.push_back({"small_threshold", options_.small_threshold, std::nullopt});
  finding.message = finding.tensors.front() + first_detail + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
