#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/kernel_clones.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/held_values.hpp"
#include "rules/support/real_values.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/tensor_states.hpp"
#include "rules/support/training_steps.hpp"
#include "rules/support/value_reads.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's WeightUpdateRatio (seed 002). At each training step s
// (rules/support/training_steps.hpp), for each tensor of the `weights` collection saved there with
// its values, and its previous saved training step p:
//   ratio = ||W[s] - W[p]||_2 / (||W[p]||_2 + epsilon)
// (the size of the update relative to the weights it was applied to, both as element-wise L2
// norms). The rule fires when ratio > large_threshold or ratio < small_threshold. With num_steps
// set, p must lie within num_steps training steps of s (counted in TRAIN mode steps), otherwise
// the tensor is not compared at s; by default any previous saved training step will do.
// A shape change or a ratio that is NaN is not compared.
class WeightUpdateRatioRule final : public Rule {
 public:
  struct Options {
    std::optional<std::int64_t> num_steps;
    double large_threshold = 10.0;
    double small_threshold = 0.00000001;
    double epsilon = 0.000000001;
  };

  WeightUpdateRatioRule(Trial base_trial, Options options);

  std::string_view name() const override { return "WeightUpdateRatio"; }
  bool invoke_at_step(std::int64_t step) override;
  // A step's weights are listed ahead (Rule::reads_ahead); their values are read where the step
  // is judged, a few MiB at a time, rather than held for steps read ahead.
  bool reads_ahead() const override { return true; }
  std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const override;
  RequiredTensors required_tensors() const override { return {.collections = {"weights"}}; }

  const Options& options() const { return options_; }

 private:
  // The values of the first of `weights` at `step`, in their order (nullopt: saved only as
  // reductions), and what stopped the reading short: an exception from a read (rethrown once
  // the values before it are judged), or copies past a read's share of kValueBytesAtATime.
  struct WeightReads {
    std::vector<std::optional<TensorValue>> values;
    std::exception_ptr failure;
  };
  WeightReads read_weights(const Trial& trial, std::span<const TensorRef> weights,
                           std::int64_t step) const;

  // What read_step() reads: whether the step trains, its TRAIN step, and its weights.
  struct Reading;
  // What the rule keeps of one weight: its last saved training step, and its value there.
  struct WeightState {
    TensorSaves saves;
    HeldValues::Slot* held = nullptr;
  };
  // What measuring one weight's update at a step found.
  struct Measured;
  // Moves each weight of `chunk` that has a value at `step` on to the step, and measures its
  // update from its previous saved step; holds its value for the next. Each weight's on one
  // thread, as many at once as there are threads free. `current` is emptied.
  std::vector<Measured> measure(const Trial& trial, std::span<const TensorRef> chunk,
                                std::span<WeightState* const> states,
                                std::vector<std::optional<TensorValue>>& current, std::int64_t step,
                                std::int64_t train_step);

  Options options_;
  // The weights read at the last step, for the next one's updates.
  HeldValues held_;
  TensorStates<WeightState> states_;
};

// A weight's update measured: a member of the rule's state (Measured), so not in an anonymous
// namespace.
struct WeightUpdateNorms {
  double update = 0.0;   // ||current - previous||_2
  double weights = 0.0;  // ||previous||_2
};

namespace {

const TensorSelection& weights() {
  static const TensorSelection selection{.collections = {"weights"}};
  return selection;
}

// Both sums in double, over kLanes interleaved partial sums added up at the end. One running sum
// waits for each add to finish before the next can start; independent lanes keep the adders busy
// and fill vector registers. Elements are loaded with memcpy: a value's bytes sit at any
// alignment inside its record.
template <typename T>
RULESTREAM_INLINE_LAMBDA inline WeightUpdateNorms lane_norms(const std::byte* before,
                                                             const std::byte* after,
                                                             std::size_t count) {
  constexpr std::size_t kLanes = 8;
  const auto load = [](const std::byte* data, std::size_t i) RULESTREAM_INLINE_LAMBDA {
    T value;
    std::memcpy(&value, data + i * sizeof(T), sizeof(T));
    return static_cast<double>(value);
  };
  std::array<double, kLanes> update{};
  std::array<double, kLanes> weights{};
  std::size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const double b = load(before, i + lane);
      const double delta = load(after, i + lane) - b;
      update[lane] += delta * delta;
      weights[lane] += b * b;
    }
  }
  for (std::size_t lane = 0; i < count; ++i, ++lane) {
    const double b = load(before, i);
    const double delta = load(after, i) - b;
    update[lane] += delta * delta;
    weights[lane] += b * b;
  }
  double update_sum = 0.0;
  double weights_sum = 0.0;
  for (std::size_t lane = 0; lane < kLanes; ++lane) {
    update_sum += update[lane];
    weights_sum += weights[lane];
  }
  return WeightUpdateNorms{std::sqrt(update_sum), std::sqrt(weights_sum)};
}

}  // namespace

// Float32 and float64 weights, the loop that measures every update: built for AVX-512 and AVX2
// beside the baseline (core/model/kernel_clones.hpp). External, as target_clones wants.
namespace weight_update_kernels {

RULESTREAM_KERNEL_CLONES
WeightUpdateNorms float32_norms(const std::byte* before, const std::byte* after,
                                std::size_t count) {
  return lane_norms<float>(before, after, count);
}

RULESTREAM_KERNEL_CLONES
WeightUpdateNorms float64_norms(const std::byte* before, const std::byte* after,
                                std::size_t count) {
  return lane_norms<double>(before, after, count);
}

}  // namespace weight_update_kernels

namespace {

std::optional<WeightUpdateNorms> update_norms(const TensorValue& previous,
                                              const TensorValue& current) {
  if (previous.shape() != current.shape()) return std::nullopt;
  const auto count = static_cast<std::size_t>(current.size());
  if (previous.dtype() == DType::Float32 && current.dtype() == DType::Float32) {
    return weight_update_kernels::float32_norms(previous.bytes().data(), current.bytes().data(),
                                                count);
  }
  if (previous.dtype() == DType::Float64 && current.dtype() == DType::Float64) {
    return weight_update_kernels::float64_norms(previous.bytes().data(), current.bytes().data(),
                                                count);
  }
  // Other dtypes widened to doubles first.
  const auto before = real_values(previous);
  const auto after = real_values(current);
  if (!before || !after) return std::nullopt;
  return weight_update_kernels::float64_norms(reinterpret_cast<const std::byte*>(before->data()),
                                              reinterpret_cast<const std::byte*>(after->data()),
                                              after->size());
}

// The weights of one read (Trial::values_at: one lookup under the store's lock, one read per
// event file): 64 small weights' lookups, framing and decoding are worth a task of their own.
constexpr std::size_t kWeightsPerRead = 64;
// The reads made at once, on as many threads as are free: a step's weights are read, measured
// and judged this many reads at a time (their values and the previous step's held together).
constexpr std::size_t kReadsAtATime = 64;
// Reads that fail end a batch at a multiple of this many weights: where the rule, reading 256
// weights at a time one read after another, had got to when a read threw (which weights' saved
// steps were recorded at the step that could not be read).
constexpr std::size_t kWeightsBeforeAFailure = 256;
// The values a task of update norms sums at least (a few dozen microseconds): small weights are
// batched until they hold that many, since a task costs more than a few thousand values' sums.
constexpr std::uint64_t kElementsPerTask = std::uint64_t{1} << 16;

// How many bytes of copied weights (S3, compressed files, local records read into recycled
// buffers) are held from one step for the next; weights in a kept mapping of a local file cost
// only their handles.
constexpr std::size_t kHeldCopiedBytes = std::size_t{64} << 20;

}  // namespace

WeightUpdateRatioRule::WeightReads WeightUpdateRatioRule::read_weights(
    const Trial& trial, std::span<const TensorRef> weights, std::int64_t step) const {
  const std::size_t reads =
      std::min(kReadsAtATime, (weights.size() + kWeightsPerRead - 1) / kWeightsPerRead);
  // Copies (S3, compressed files) are held together: the reads share the bound one read had.
  const std::uint64_t bytes_per_read = std::max<std::uint64_t>(1, kValueBytesAtATime / reads);
  std::vector<std::vector<std::optional<TensorValue>>> results(reads);
  std::vector<std::exception_ptr> failures(reads);
  for_ranges_in_parallel(reads, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r != end; ++r) {
      const std::size_t first = r * kWeightsPerRead;
      try {
        results[r] = trial.values_at(
            weights.subspan(first, std::min(kWeightsPerRead, weights.size() - first)), step,
            Mode::Global, bytes_per_read);
      } catch (...) {
        failures[r] = std::current_exception();
      }
    }
  });
  // In order, up to the first read that failed or came back short (past its bytes: the weights
  // after it are read by the next batch).
  WeightReads out;
  for (std::size_t r = 0; r < reads; ++r) {
    if (failures[r]) {
      out.values.resize(out.values.size() / kWeightsBeforeAFailure * kWeightsBeforeAFailure);
      out.failure = failures[r];
      break;
    }
    const std::size_t wanted = std::min(kWeightsPerRead, weights.size() - r * kWeightsPerRead);
    for (auto& value : results[r]) out.values.push_back(std::move(value));
    if (results[r].size() < wanted) break;
  }
  return out;
}

WeightUpdateRatioRule::WeightUpdateRatioRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options), held_(kHeldCopiedBytes) {}

RuleSpec weight_update_ratio_spec() {
  using Options = WeightUpdateRatioRule::Options;
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

struct WeightUpdateRatioRule::Reading final : StepReading {
  bool training = false;
  std::int64_t train_step = 0;
  std::vector<TensorRef> refs;
};

// `norms` is set when the weight's update was measured, from `previous_step`.
struct WeightUpdateRatioRule::Measured {
  std::int64_t previous_step = 0;
  std::optional<WeightUpdateNorms> norms;
  std::exception_ptr failure;  // what moving it on threw
  // Its previous value was not held: read (by previous step) before it is measured.
  bool needs_previous = false;
};

std::unique_ptr<StepReading> WeightUpdateRatioRule::read_step(const Trial& trial,
                                                              std::int64_t step) const {
  auto reading = std::make_unique<Reading>();
  reading->training = is_training_step(trial, step);
  if (!reading->training) return reading;
  reading->train_step = trial.mode_step(step).value_or(step);
  reading->refs = weights().tensor_refs(trial, step);
  return reading;
}

std::vector<WeightUpdateRatioRule::Measured> WeightUpdateRatioRule::measure(
    const Trial& trial, std::span<const TensorRef> chunk, std::span<WeightState* const> states,
    std::vector<std::optional<TensorValue>>& current, std::int64_t step, std::int64_t train_step) {
  std::vector<Measured> measured(chunk.size());
  // The norms read every value of both steps and depend on one weight each: small weights are
  // batched to enough values a task.
  std::uint64_t elements = 0;
  for (const auto& value : current) elements += value ? value->size() : 0;
  const auto grain = static_cast<std::size_t>(std::max<std::uint64_t>(
      1, kElementsPerTask * chunk.size() / std::max<std::uint64_t>(elements, 1)));
  const auto measure_and_hold = [&](std::size_t k, std::optional<TensorValue> previous) {
    if (previous) measured[k].norms = update_norms(*previous, *current[k]);
    held_.hold(*states[k]->held, step, std::move(*current[k]));  // the next step's previous
    current[k].reset();
  };
  for_ranges_in_parallel(chunk.size(), grain, [&](std::size_t begin, std::size_t end) {
    // A handle counted apart: tasks making Tensors of one handle would fight over its count.
    const Trial own = trial.separately_counted();
    // The weights' previous saves are nearly always one step: its TRAIN step is looked up once
    // a range, not under the trial's lock for each weight.
    std::optional<std::pair<std::int64_t, std::int64_t>> known_train_step;  // global, TRAIN
    const auto train_step_of = [&](std::int64_t global) {
      if (!known_train_step || known_train_step->first != global) {
        known_train_step.emplace(global, own.mode_step(global).value_or(global));
      }
      return known_train_step->second;
    };
    for (std::size_t k = begin; k != end; ++k) {
      if (!current[k]) continue;  // saved only as reductions at this step: no update to measure
      Measured& weight = measured[k];
      try {
        WeightState& state = *states[k];
        const TensorSaves::Steps previous_steps =
            state.saves.advance(own, own.tensor(chunk[k]), step, 1);
        std::optional<TensorValue> previous;
        if (!previous_steps.empty()) {
          weight.previous_step = previous_steps.back();
          const bool near = !options_.num_steps ||
                            train_step - train_step_of(weight.previous_step) <= *options_.num_steps;
          if (near) {
            previous = held_.take(*state.held, weight.previous_step);
            weight.needs_previous = !previous;
          }
        }
        if (!weight.needs_previous) measure_and_hold(k, std::move(previous));
      } catch (...) {
        weight.failure = std::current_exception();
      }
    }
  });
  for (const Measured& weight : measured) {
    if (weight.failure) std::rethrow_exception(weight.failure);
  }
  // Previous values not held (a rule's first step, copies past the budget): read with one
  // values_at per previous step, then measured as the others were.
  std::vector<std::optional<TensorValue>> previous(chunk.size());
  std::vector<bool> read(chunk.size(), false);
  std::vector<TensorRef> refs;
  std::vector<std::size_t> positions;
  for (std::size_t first = 0; first < chunk.size(); ++first) {
    if (!measured[first].needs_previous || read[first]) continue;
    const std::int64_t previous_step = measured[first].previous_step;
    refs.clear();
    positions.clear();
    for (std::size_t k = first; k < chunk.size(); ++k) {
      if (!measured[k].needs_previous || read[k] || measured[k].previous_step != previous_step) {
        continue;
      }
      read[k] = true;
      refs.push_back(chunk[k]);
      positions.push_back(k);
    }
    auto found = trial.values_at(refs, previous_step);
    for (std::size_t i = 0; i < found.size(); ++i) previous[positions[i]] = std::move(found[i]);
  }
  if (std::find(read.begin(), read.end(), true) != read.end()) {
    for_ranges_in_parallel(chunk.size(), grain, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k != end; ++k) {
        if (read[k]) measure_and_hold(k, std::move(previous[k]));
      }
    });
  }
  return measured;
}

bool WeightUpdateRatioRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const auto read = reading(step);
  const auto& weights_read = static_cast<const Reading&>(*read);
  if (!weights_read.training) return false;
  const std::vector<TensorRef>& refs = weights_read.refs;
  // A weight first seen gets its slot of held values.
  const std::vector<WeightState*>& states = states_.of(
      refs, [&](const std::string* name, WeightState& state) { state.held = &held_.slot(name); });
  Finding finding;
  std::string first_detail;
  // Every weight is looked at, even past kMaxReportedTensors, so that each one's previous saved
  // step stays known. Values are read a few MiB at a time (Trial::values_at: one read per event
  // file rather than one per value), the previous ones held from the step before. Each weight
  // moves on and is measured on as many threads as are free; they are judged here in name
  // order, as one thread would.
  for (std::size_t done = 0; done < refs.size();) {
    WeightReads reads = read_weights(trial, std::span(refs).subspan(done), step);
    const std::size_t count = reads.values.size();
    const std::vector<Measured> measured =
        measure(trial, std::span(refs).subspan(done, count), std::span(states).subspan(done, count),
                reads.values, step, weights_read.train_step);
    for (std::size_t k = 0; k < count; ++k) {
      const auto& norms = measured[k].norms;
      if (!norms) continue;
      const std::int64_t previous_step = measured[k].previous_step;
      const std::string& name = refs[done + k].name();
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
    done += count;
    if (reads.failure) std::rethrow_exception(reads.failure);
  }
  if (finding.tensors.empty()) return false;

  finding.figures.push_back({"large_threshold", options_.large_threshold, std::nullopt});
  finding.figures.push_back({"small_threshold", options_.small_threshold, std::nullopt});
  finding.message = finding.tensors.front() + first_detail + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
