#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/reduction.hpp"
#include "core/model/reduction_set.hpp"
#include "core/model/tensor_value.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// One tensor of a trial across steps and workers, as smdebug's Tensor presents it.
// `step` arguments are steps of `mode` (global steps for Mode::Global). `worker` defaults to
// the lexicographically first worker that saved the tensor at that step.
// Missing data raises smdebug's exceptions: TensorUnavailableForStep (saved, but not at this
// step), StepUnavailable (nothing saved at this step), StepNotYetAvailable (not seen yet),
// NoMoreData (the job ended before it), InvalidWorker.
class Tensor {
 public:
  const std::string& name() const { return *name_; }

  std::vector<std::int64_t> steps(Mode mode = Mode::Global,
                                  bool show_incomplete_steps = false) const;

  TensorValue value(std::int64_t step, Mode mode = Mode::Global,
                    const std::optional<std::string>& worker = std::nullopt) const;

  // A saved reduction when the job saved it, else computed from the value.
  Scalar reduction_value(std::int64_t step, Reduction reduction, Mode mode = Mode::Global,
                         const std::optional<std::string>& worker = std::nullopt,
                         bool abs = false) const;

  // Every reduction and the element counts of the saved value itself (never a reduction the job
  // saved), from the one pass the pipeline made as it landed, else computed once and cached.
  // TensorUnavailableForStep when no value was saved at the step. Strings and complex values
  // give an empty set (no reductions, no counts).
  ReductionSet value_reductions(std::int64_t step, Mode mode = Mode::Global,
                                const std::optional<std::string>& worker = std::nullopt) const;
  // value_reductions with at least the reductions `keys` (and the counts and source dtype): for
  // a rule that screens every tensor at every step by a few figures, the set landed with the
  // value is not unpacked whole.
  ReductionSet value_reductions(std::span<const ReductionKey> keys, std::int64_t step,
                                Mode mode = Mode::Global,
                                const std::optional<std::string>& worker = std::nullopt) const;

  // How many elements the value has and how many are zero, NaN or infinite (ElementCounts),
  // from the same one pass as the reductions and cached with them: rules that count elements
  // never need the value itself. TensorUnavailableForStep when no value was saved at the step,
  // or when it holds strings or complex numbers.
  ElementCounts element_counts(std::int64_t step, Mode mode = Mode::Global,
                               const std::optional<std::string>& worker = std::nullopt) const;

  // Only the reductions the job saved (smdebug does not compute the others here).
  std::map<ReductionKey, Scalar> reduction_values(
      std::int64_t step, Mode mode = Mode::Global,
      const std::optional<std::string>& worker = std::nullopt) const;

  // Whole-job figures: the reductions of every worker's elements at the step taken together
  // (stages/reduce/reduction_combiner.hpp), from each worker's reductions without concatenating
  // values. Each worker that saved the value contributes the reductions computed from it (cached
  // by the trial); a worker that saved only reductions contributes those, with its element count
  // from its saved shape (without one, its mean, variance and std are unknown). Saved std and
  // variance are never combined: hooks save them as sample figures (ddof = 1) and do not say so.
  // Figures that cannot be had are missing from the set; a missing step raises as value() does.
  ReductionSet combined_reductions(std::int64_t step, Mode mode = Mode::Global) const;

  // One whole-job figure; TensorUnavailableForStep, naming the tensor and the reason, when it
  // cannot be had.
  Scalar combined_reduction(std::int64_t step, Reduction reduction, Mode mode = Mode::Global,
                            bool abs = false) const;

  // Which reductions were saved at this step for this worker, without reading them.
  std::vector<ReductionKey> saved_reductions(
      std::int64_t step, Mode mode = Mode::Global,
      const std::optional<std::string>& worker = std::nullopt) const;

  std::map<std::int64_t, TensorValue> values(
      Mode mode = Mode::Global, const std::optional<std::string>& worker = std::nullopt) const;

  // Workers that saved the tensor at the step, in the order their files were loaded.
  std::vector<std::string> workers(std::int64_t step, Mode mode = Mode::Global) const;

  // The last n steps of `mode` up to and including `step` (all of them when n is nullopt).
  std::vector<std::int64_t> prev_steps(std::int64_t step, std::optional<std::size_t> n,
                                       Mode mode = Mode::Global) const;

  // The saved shape, else the value's shape; ShapeUnavailableForStep when neither exists.
  Shape shape(std::int64_t step, Mode mode = Mode::Global,
              const std::optional<std::string>& worker = std::nullopt) const;

  const Trial& trial() const { return trial_; }

 private:
  friend class Trial;
  friend class TensorAccess;
  // `name` and `history` are the store's entry for the tensor, which the trial keeps alive.
  Tensor(Trial trial, const std::string& name, const TensorHistory& history)
      : trial_(std::move(trial)), name_(&name), history_(&history) {}

  Trial trial_;
  // Not copies: rules make a Tensor for every tensor at every step.
  const std::string* name_;
  const TensorHistory* history_;
};

}  // namespace rulestream
