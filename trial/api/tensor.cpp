#include "trial/api/tensor.hpp"

#include <algorithm>
#include <limits>

#include "core/model/exceptions.hpp"
#include "stages/reduce/reduction_combiner.hpp"
#include "stages/reduce/reductions.hpp"
#include "trial/api/tensor_lookup.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {
namespace {

// What a query resolved to: copies, so no lock is held while reading files.
struct ResolvedSave {
  std::int64_t global_step = 0;
  WorkerSave save;
};

template <typename T>
T first_element(const TensorValue& value) {
  return value.elements<T>()[0];
}

// A saved reduction is a 0-d tensor of the source dtype.
Scalar scalar_of(const TensorValue& value, const std::string& where) {
  if (value.size() < 1 || value.is_string()) {
    throw FormatError(where, "a saved reduction must hold one number");
  }
  const DType dtype = value.dtype();
  if (is_floating(dtype)) return Scalar::of_double(dtype, value.as_double(0));
  switch (dtype) {
    case DType::Int8:
      return Scalar::of_int(dtype, first_element<std::int8_t>(value));
    case DType::Int16:
      return Scalar::of_int(dtype, first_element<std::int16_t>(value));
    case DType::Int32:
      return Scalar::of_int(dtype, first_element<std::int32_t>(value));
    case DType::Int64:
      return Scalar::of_int(dtype, first_element<std::int64_t>(value));
    case DType::UInt8:
      return Scalar::of_uint(dtype, first_element<std::uint8_t>(value));
    case DType::UInt16:
      return Scalar::of_uint(dtype, first_element<std::uint16_t>(value));
    case DType::UInt32:
      return Scalar::of_uint(dtype, first_element<std::uint32_t>(value));
    case DType::UInt64:
      return Scalar::of_uint(dtype, first_element<std::uint64_t>(value));
    case DType::Bool:
      return Scalar::of_bool(first_element<std::uint8_t>(value) != 0);
    default:
      break;
  }
  throw FormatError(where, "a saved reduction of dtype " + std::string(dtype_name(dtype)) +
                               " cannot be read as a number");
}

}  // namespace

class TensorAccess {
 public:
  // smdebug's Tensor._step: runs `use(save, global step)` under the read lock on the save for
  // (step, mode, worker), or throws the exception that says why there is none. `use` copies out
  // only what its caller needs (no lock is held while reading files).
  template <typename Result, typename Use>
  static Result with_save(const Tensor& tensor, std::int64_t step, Mode mode,
                          const std::optional<std::string>& worker, const Use& use) {
    return at_step<Result>(tensor, step, mode,
                           [&](const TensorStep& found, std::int64_t global, std::uint64_t g) {
                             const WorkerSave* chosen = chosen_save(found, g, worker);
                             if (chosen == nullptr)
                               throw InvalidWorker(*worker, tensor.name(), step);
                             return use(*chosen, global);
                           });
  }

  // The save of `worker` (by default the lexicographically first worker's) among those visible
  // at generation g; nullptr when that worker saved none. Under the store's read lock.
  static const WorkerSave* chosen_save(const TensorStep& found, std::uint64_t g,
                                       const std::optional<std::string>& worker) {
    if (!worker) return first_worker_save(found, g);
    const WorkerSave* chosen = nullptr;
    for (const auto& save : found.saves) {
      if (save.generation <= g && *save.worker == *worker) chosen = &save;
    }
    return chosen;
  }

  // Tensor::steps as of generation g.
  static std::vector<std::int64_t> steps(const Tensor& tensor, Mode mode,
                                         bool show_incomplete_steps, std::uint64_t g);

  // The raw records of the value at each of `steps` (of `mode`, as of generation g) for
  // `worker`, in order, up to the first step that has none (where Tensor::value would raise).
  static std::vector<TrialStore::RecordRead> value_records(const Tensor& tensor,
                                                           std::span<const std::int64_t> steps,
                                                           Mode mode,
                                                           const std::optional<std::string>& worker,
                                                           std::uint64_t g) {
    const TrialStore& store = *tensor.trial().store_;
    std::vector<TrialStore::RecordRead> reads;
    reads.reserve(steps.size());
    auto lock = store.read_lock();
    for (const std::int64_t step : steps) {
      const TensorStep* found = find_step(store, *tensor.history_, step, mode, g, nullptr);
      const WorkerSave* save = found != nullptr ? chosen_save(*found, g, worker) : nullptr;
      const RecordRef* raw = save != nullptr ? save->raw() : nullptr;
      if (raw == nullptr) break;
      reads.push_back({*raw, tensor.name_});
    }
    return reads;
  }

  static ResolvedSave resolve(const Tensor& tensor, std::int64_t step, Mode mode,
                              const std::optional<std::string>& worker) {
    return with_save<ResolvedSave>(tensor, step, mode, worker,
                                   [](const WorkerSave& save, std::int64_t global) {
                                     return ResolvedSave{global, save};
                                   });
  }

  // Every worker's save at (step, mode), by worker name; the same exceptions as resolve.
  static std::vector<WorkerSave> resolve_all(const Tensor& tensor, std::int64_t step, Mode mode) {
    return at_step<std::vector<WorkerSave>>(
        tensor, step, mode, [](const TensorStep& found, std::int64_t, std::uint64_t g) {
          std::vector<WorkerSave> saves;
          for (const auto& save : found.saves) {
            if (save.generation <= g) saves.push_back(save);
          }
          std::sort(saves.begin(), saves.end(),
                    [](const WorkerSave& a, const WorkerSave& b) { return *a.worker < *b.worker; });
          return saves;
        });
  }

  static const TrialStore& store(const Tensor& tensor) { return *tensor.trial().store_; }
  static std::uint64_t view(const Tensor& tensor) { return tensor.trial().view(); }

 private:
  // Runs `pick(entry, global step, generation)` under the read lock on the tensor's entry for
  // (step, mode), refreshing once when the handle may; without an entry, throws smdebug's
  // exception for why there is none.
  template <typename Result, typename Pick>
  static Result at_step(const Tensor& tensor, std::int64_t step, Mode mode, const Pick& pick) {
    const Trial& trial = tensor.trial();
    // One lock for the generation and the lookup: rules read millions of values, and the lock's
    // shared counter is a cache line every thread writes.
    auto attempt = [&]() -> std::optional<Result> {
      auto lock = trial.store_->read_lock();
      const std::uint64_t g = trial.generation_.value_or(trial.store_->generation_under_lock());
      std::int64_t global = 0;
      const TensorStep* found = find_step(*trial.store_, *tensor.history_, step, mode, g, &global);
      if (found == nullptr) return std::nullopt;
      return pick(*found, global, g);
    };

    // As Trial::view: an unpinned handle sees what a refresh (when one is due) finds.
    if (!trial.is_pinned()) trial.store_->maybe_refresh();
    if (auto resolved = attempt()) return std::move(*resolved);
    if (!trial.is_pinned()) {
      trial.store_->maybe_refresh();
      if (auto resolved = attempt()) return std::move(*resolved);
    }
    switch (trial.has_passed_step(step, mode)) {
      case StepState::Available:
        throw TensorUnavailableForStep(tensor.name(), step, mode);
      case StepState::Unavailable:
        throw StepUnavailable(step, mode);
      case StepState::NotYetAvailable:
        if (trial.loaded_all_steps()) {
          const auto known = trial.steps(mode);
          throw NoMoreData("looking for " + std::string(mode_name(mode)) + " step " +
                           std::to_string(step) + "; the last step saved is " +
                           (known.empty() ? std::string("none") : std::to_string(known.back())));
        }
        throw StepNotYetAvailable(step, mode);
    }
    throw StepUnavailable(step, mode);
  }
};

namespace {

// Whether Tensor::steps lists a save of the tensor at `global`, as of generation g: a worker's
// save is visible, and the step is complete (or incomplete steps are asked for).
bool listed_step(const TensorStep& tensor_step, std::int64_t global, std::uint64_t g,
                 const TrialStatus& status, bool show_incomplete_steps) {
  const auto visible = std::count_if(tensor_step.saves.begin(), tensor_step.saves.end(),
                                     [&](const WorkerSave& save) { return save.generation <= g; });
  if (visible == 0) return false;
  return show_incomplete_steps || status.loaded_all_steps || status.last_complete_step >= global ||
         visible >= status.num_workers;
}

}  // namespace

std::vector<std::int64_t> Tensor::steps(Mode mode, bool show_incomplete_steps) const {
  return TensorAccess::steps(*this, mode, show_incomplete_steps, TensorAccess::view(*this));
}

std::vector<std::int64_t> TensorAccess::steps(const Tensor& tensor, Mode mode,
                                              bool show_incomplete_steps, std::uint64_t g) {
  const TrialStore& store = TensorAccess::store(tensor);
  const TensorHistory* history = tensor.history_;
  const TrialStatus status = store.status(g);
  auto lock = store.read_lock();
  std::vector<std::int64_t> result;
  if (history->generation > g) return result;
  for (const auto& [global, tensor_step] : history->steps) {
    if (mode != Mode::Global && tensor_step.mode != mode) continue;
    if (listed_step(tensor_step, global, g, status, show_incomplete_steps)) {
      result.push_back(mode == Mode::Global ? global : tensor_step.mode_step);
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

namespace {

// Why a save has no value to read.
TensorUnavailableForStep no_value_saved(const Tensor& tensor, std::int64_t step, Mode mode,
                                        bool saved_reductions) {
  return TensorUnavailableForStep(
      tensor.name(), step, mode,
      saved_reductions ? "only reductions of it were saved" : "no value was saved");
}

// The record of the value saved at (step, mode, worker); TensorUnavailableForStep saying why
// there is none.
RecordRef raw_record(const Tensor& tensor, std::int64_t step, Mode mode,
                     const std::optional<std::string>& worker) {
  struct Found {
    std::optional<RecordRef> raw;
    bool saved_reductions = false;
  };
  Found found = TensorAccess::with_save<Found>(
      tensor, step, mode, worker, [](const WorkerSave& save, std::int64_t) {
        return Found{save.raw_copy(), !save.reductions.empty()};
      });
  if (!found.raw) throw no_value_saved(tensor, step, mode, found.saved_reductions);
  return std::move(*found.raw);
}

}  // namespace

TensorValue Tensor::value(std::int64_t step, Mode mode,
                          const std::optional<std::string>& worker) const {
  return TensorAccess::store(*this).read_record(raw_record(*this, step, mode, worker), name());
}

Scalar Tensor::reduction_value(std::int64_t step, Reduction reduction, Mode mode,
                               const std::optional<std::string>& worker, bool abs) const {
  const ReductionKey key{reduction, abs};
  // Under the lock, only what answers: the saved reduction's record, else the figure computed
  // as the value landed, else the value's record.
  struct Found {
    std::optional<RecordRef> saved;
    std::optional<Scalar> landed;
    std::optional<RecordRef> raw;
  };
  Found found = TensorAccess::with_save<Found>(
      *this, step, mode, worker, [&](const WorkerSave& save, std::int64_t) {
        for (const auto& [saved_key, ref] : save.reductions) {
          if (saved_key == key) return Found{ref, std::nullopt, std::nullopt};
        }
        const RecordRef* raw = save.raw();
        if (raw != nullptr && raw->reductions != nullptr) {
          if (const auto scalar = raw->reductions->get(key)) {
            return Found{std::nullopt, *scalar, std::nullopt};
          }
        }
        return Found{std::nullopt, std::nullopt, save.raw_copy()};
      });
  if (found.landed) return *found.landed;
  const TrialStore& store = TensorAccess::store(*this);
  if (found.saved) {
    const RecordRef& ref = *found.saved;
    const TensorValue saved = store.read_record(ref, name());
    return scalar_of(saved, store.describe_record(ref, name()));
  }
  if (!found.raw) {
    throw TensorUnavailableForStep(
        name(), step, mode, "neither " + reduction_key_name(key) + " nor the value was saved");
  }
  if (const auto scalar = store.reductions_of(*found.raw, name()).get(key)) return *scalar;
  // Not computable for this value (strings, min of an empty tensor): say why.
  return compute_reduction(store.read_record(*found.raw, name()), key);
}

namespace {

// Tensor::value_reductions: the set landed with the value, unpacked whole or only `keys` of it,
// else the one computed from the record (whole, and cached).
ReductionSet value_reductions_of(const Tensor& tensor,
                                 std::optional<std::span<const ReductionKey>> keys,
                                 std::int64_t step, Mode mode,
                                 const std::optional<std::string>& worker) {
  // Reductions computed as the value landed are copied out under the lock (the common case,
  // asked for every tensor at every step); otherwise the record, to compute them from.
  struct Found {
    std::optional<ReductionSet> landed;
    std::optional<RecordRef> raw;
    bool saved_reductions = false;
  };
  Found found = TensorAccess::with_save<Found>(
      tensor, step, mode, worker, [&](const WorkerSave& save, std::int64_t) {
        const RecordRef* raw = save.raw();
        if (raw != nullptr && raw->reductions != nullptr) {
          const PackedReductions& landed = *raw->reductions;
          return Found{keys ? landed.unpack(*keys) : landed.unpack(), std::nullopt, false};
        }
        return Found{std::nullopt, save.raw_copy(), !save.reductions.empty()};
      });
  if (found.landed) return std::move(*found.landed);
  if (!found.raw) throw no_value_saved(tensor, step, mode, found.saved_reductions);
  return TensorAccess::store(tensor).reductions_of(*found.raw, tensor.name());
}

}  // namespace

ReductionSet Tensor::value_reductions(std::int64_t step, Mode mode,
                                      const std::optional<std::string>& worker) const {
  return value_reductions_of(*this, std::nullopt, step, mode, worker);
}

ReductionSet Tensor::value_reductions(std::span<const ReductionKey> keys, std::int64_t step,
                                      Mode mode, const std::optional<std::string>& worker) const {
  return value_reductions_of(*this, keys, step, mode, worker);
}

ElementCounts Tensor::element_counts(std::int64_t step, Mode mode,
                                     const std::optional<std::string>& worker) const {
  // Counts landed with the value are read straight from the store (rules ask for every tensor
  // at every step); otherwise they come with the value's reductions.
  struct Landed {
    std::optional<ElementCounts> counts;
    DType dtype = DType::Invalid;
  };
  std::optional<Landed> landed = TensorAccess::with_save<std::optional<Landed>>(
      *this, step, mode, worker, [](const WorkerSave& save, std::int64_t) -> std::optional<Landed> {
        const RecordRef* raw = save.raw();
        if (raw == nullptr || raw->reductions == nullptr) return std::nullopt;
        return Landed{raw->reductions->counts(), raw->reductions->source_dtype()};
      });
  if (!landed) {
    const ReductionSet reductions = value_reductions(step, mode, worker);
    landed = Landed{reductions.counts(), reductions.source_dtype()};
  }
  if (!landed->counts) {
    throw TensorUnavailableForStep(
        name(), step, mode,
        "its " + std::string(dtype_name(landed->dtype)) + " elements are not real numbers");
  }
  return *landed->counts;
}

std::map<ReductionKey, Scalar> Tensor::reduction_values(
    std::int64_t step, Mode mode, const std::optional<std::string>& worker) const {
  const ResolvedSave resolved = TensorAccess::resolve(*this, step, mode, worker);
  const TrialStore& store = TensorAccess::store(*this);
  std::map<ReductionKey, Scalar> result;
  for (const auto& [key, ref] : resolved.save.reductions) {
    result[key] = scalar_of(store.read_record(ref, name()), store.describe_record(ref, name()));
  }
  return result;
}

namespace {

// One worker's contribution to a combined figure, and where it came from (for error messages).
struct WorkerPart {
  std::string worker;
  bool saved_value = false;
  WorkerReductions reductions;
};

// Hooks save std and variance as sample figures (the PyTorch hook's ddof = 1) without saying
// so; combining them as population figures would give a number that is neither.
bool combinable_when_saved(ReductionKey key) {
  return key.reduction != Reduction::Std && key.reduction != Reduction::Variance;
}

WorkerPart part_of(const TrialStore& store, const std::string& tensor, const WorkerSave& save) {
  WorkerPart part;
  part.worker = *save.worker;
  if (save.raw()) {
    // Cached by the store for every record: the value is not read again.
    part.saved_value = true;
    part.reductions.reductions = store.reductions_of(*save.raw(), tensor);
    part.reductions.dtype = part.reductions.reductions.source_dtype();
    if (const auto& counts = part.reductions.reductions.counts()) {
      part.reductions.count = counts->elements;
    }
    return part;
  }
  for (const auto& [key, ref] : save.reductions) {
    if (!combinable_when_saved(key)) continue;
    const Scalar scalar =
        scalar_of(store.read_record(ref, tensor), store.describe_record(ref, tensor));
    part.reductions.reductions.set(key, scalar);
    // Saved reductions are 0-d tensors of the source dtype (FORMAT.md).
    if (part.reductions.dtype == DType::Invalid) part.reductions.dtype = scalar.dtype();
  }
  if (save.shape) part.reductions.count = element_count(*save.shape);
  return part;
}

std::vector<WorkerPart> parts_of(const TrialStore& store, const std::string& tensor,
                                 const std::vector<WorkerSave>& saves) {
  std::vector<WorkerPart> parts;
  parts.reserve(saves.size());
  for (const WorkerSave& save : saves) parts.push_back(part_of(store, tensor, save));
  return parts;
}

// Combines, or says in a sentence why nothing can be combined at all.
std::optional<ReductionSet> combine_parts(const std::vector<WorkerPart>& parts,
                                          std::string* why_not) {
  std::vector<WorkerReductions> reductions;
  for (const WorkerPart& part : parts) {
    if (part.reductions.dtype == DType::Invalid) {
      *why_not = part.worker + " saved neither the value nor a reduction that combines";
      return std::nullopt;
    }
    reductions.push_back(part.reductions);
  }
  for (const WorkerPart& part : parts) {
    if (part.reductions.dtype != parts.front().reductions.dtype) {
      *why_not = parts.front().worker + " saved " +
                 std::string(dtype_name(parts.front().reductions.dtype)) + " but " + part.worker +
                 " saved " + std::string(dtype_name(part.reductions.dtype));
      return std::nullopt;
    }
  }
  return combine_reductions(reductions);
}

// Why a combined figure is missing from a set that was combined.
std::string why_missing(const std::vector<WorkerPart>& parts, ReductionKey key) {
  const std::string name = reduction_key_name(key);
  const DType dtype = parts.front().reductions.dtype;
  if (!is_real_numeric(dtype)) {
    return "a " + std::string(dtype_name(dtype)) + " tensor has no reductions";
  }
  const bool needs_count = key.reduction == Reduction::Mean || key.reduction == Reduction::Std ||
                           key.reduction == Reduction::Variance;
  for (const WorkerPart& part : parts) {
    if (part.saved_value) continue;
    if (!combinable_when_saved(key)) {
      return part.worker + " saved only reductions, and saved std/variance may be sample " +
             "figures (ddof = 1) that do not combine";
    }
    if (!part.reductions.reductions.get(key)) {
      return part.worker + " saved neither " + name + " nor the value";
    }
    if (needs_count && !part.reductions.count) {
      return part.worker + " saved only reductions and no shape, so its element count is unknown";
    }
  }
  return "every worker's tensor is empty";  // min and max of nothing
}

}  // namespace

ReductionSet Tensor::combined_reductions(std::int64_t step, Mode mode) const {
  const std::vector<WorkerSave> saves = TensorAccess::resolve_all(*this, step, mode);
  std::string why_not;
  return combine_parts(parts_of(TensorAccess::store(*this), name(), saves), &why_not)
      .value_or(ReductionSet{});
}

Scalar Tensor::combined_reduction(std::int64_t step, Reduction reduction, Mode mode,
                                  bool abs) const {
  const ReductionKey key{reduction, abs};
  const std::vector<WorkerSave> saves = TensorAccess::resolve_all(*this, step, mode);
  const std::vector<WorkerPart> parts = parts_of(TensorAccess::store(*this), name(), saves);
  std::string why_not;
  const std::optional<ReductionSet> combined = combine_parts(parts, &why_not);
  if (combined) {
    if (const auto& scalar = combined->get(key)) return *scalar;
    why_not = why_missing(parts, key);
  }
  throw TensorUnavailableForStep(name(), step, mode,
                                 "no combined " + reduction_key_name(key) + ": " + why_not);
}

std::vector<ReductionKey> Tensor::saved_reductions(std::int64_t step, Mode mode,
                                                   const std::optional<std::string>& worker) const {
  const ResolvedSave resolved = TensorAccess::resolve(*this, step, mode, worker);
  std::vector<ReductionKey> keys;
  for (const auto& [key, ref] : resolved.save.reductions) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::map<std::int64_t, TensorValue> Tensor::values(Mode mode,
                                                   const std::optional<std::string>& worker) const {
  // The steps and every step's record found in one look at the store, then read together
  // (TrialStore::read_records): step by step, each value's lookup, lock and refresh check cost
  // a tenth of reading it (callgrind, pipeline_e2e's small job from Python).
  const std::uint64_t g = TensorAccess::view(*this);
  const std::vector<std::int64_t> listed = TensorAccess::steps(*this, mode, false, g);
  const std::vector<TrialStore::RecordRead> reads =
      TensorAccess::value_records(*this, listed, mode, worker, g);
  std::vector<TensorValue> read = TensorAccess::store(*this).read_records(reads);
  std::map<std::int64_t, TensorValue> result;
  for (std::size_t i = 0; i < read.size(); ++i) {
    result.emplace_hint(result.end(), listed[i], std::move(read[i]));
  }
  // A step with no value for the worker: value() raises what smdebug raises there.
  for (std::size_t i = read.size(); i < listed.size(); ++i) {
    result.emplace_hint(result.end(), listed[i], value(listed[i], mode, worker));
  }
  return result;
}

std::vector<std::string> Tensor::workers(std::int64_t step, Mode mode) const {
  const std::uint64_t g = TensorAccess::view(*this);
  const TrialStore& store = TensorAccess::store(*this);
  auto lock = store.read_lock();
  const TensorStep* found = find_step(store, *history_, step, mode, g, nullptr);
  if (found == nullptr) throw TensorUnavailableForStep(name(), step, mode);
  std::vector<std::string> result;
  for (const auto& save : found->saves) {
    if (save.generation <= g) result.emplace_back(*save.worker);
  }
  return result;
}

std::vector<std::int64_t> Tensor::prev_steps(std::int64_t step, std::optional<std::size_t> n,
                                             Mode mode) const {
  if (!n) {
    std::vector<std::int64_t> all = steps(mode);
    all.erase(std::upper_bound(all.begin(), all.end(), step), all.end());
    return all;
  }
  // The last n only: walked back from `step` rather than listed from the first step (a rule
  // asking for the save before the step it evaluates would otherwise be quadratic in the job's
  // steps). Which steps count is steps()'s rule.
  const std::uint64_t g = TensorAccess::view(*this);
  const TrialStore& store = TensorAccess::store(*this);
  const TrialStatus status = store.status(g);
  auto lock = store.read_lock();
  std::vector<std::int64_t> result;
  if (history_->generation > g || *n == 0) return result;
  // The newest global step that can hold a save of `step` or before: `step` itself, or for a
  // mode the global step of its newest step up to `step` (a mode's steps rise with the global
  // step).
  std::int64_t last_global = step;
  if (mode != Mode::Global) {
    const auto steps_of_mode = store.mode_steps().find(mode);
    if (steps_of_mode == store.mode_steps().end()) return result;
    const ModeSteps& by_mode_step = steps_of_mode->second;
    auto after = step == std::numeric_limits<std::int64_t>::max()
                     ? by_mode_step.end()
                     : by_mode_step.lower_bound(step + 1);
    if (after == by_mode_step.begin()) return result;
    last_global = std::prev(after)->second.first;
  }
  const auto& saved = history_->steps;
  auto it = last_global == std::numeric_limits<std::int64_t>::max()
                ? saved.end()
                : saved.lower_bound(last_global + 1);
  while (it != saved.begin() && result.size() < *n) {
    --it;
    const auto& [global, tensor_step] = *it;
    if (mode != Mode::Global && tensor_step.mode != mode) continue;
    const std::int64_t reported = mode == Mode::Global ? global : tensor_step.mode_step;
    if (reported <= step && listed_step(tensor_step, global, g, status, false)) {
      result.push_back(reported);
    }
  }
  std::reverse(result.begin(), result.end());
  return result;
}

Shape Tensor::shape(std::int64_t step, Mode mode, const std::optional<std::string>& worker) const {
  const ResolvedSave resolved = TensorAccess::resolve(*this, step, mode, worker);
  if (resolved.save.shape) return *resolved.save.shape;
  if (!resolved.save.raw()) throw ShapeUnavailableForStep(name(), step, mode);
  return TensorAccess::store(*this).read_record(*resolved.save.raw(), name()).shape();
}

}  // namespace rulestream
