#pragma once

#include <algorithm>
#include <cstdint>

#include "core/model/mode.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {

// Lookups of one tensor's saves that Tensor and Trial::values_at share. Call under the store's
// read lock; `g` is the generation the caller's view sees.

// The tensor's entry for (step, mode) visible at generation g, with its global step in
// *global_out; nullptr when absent.
inline const TensorStep* find_step(const TrialStore& store, const TensorHistory& history,
                                   std::int64_t step, Mode mode, std::uint64_t g,
                                   std::int64_t* global_out) {
  if (history.generation > g) return nullptr;
  std::int64_t global = step;
  if (mode != Mode::Global) {
    const auto mode_it = store.mode_steps().find(mode);
    if (mode_it == store.mode_steps().end()) return nullptr;
    const auto* entry = mode_it->second.find(step);
    if (entry == nullptr || entry->second > g) return nullptr;
    global = entry->first;
  }
  const TensorStep* found = history.steps.find(global);
  if (found == nullptr) return nullptr;
  if (std::none_of(found->saves.begin(), found->saves.end(),
                   [&](const WorkerSave& save) { return save.generation <= g; })) {
    return nullptr;
  }
  if (global_out != nullptr) *global_out = global;
  return found;
}

// The save smdebug reads when no worker is named: the lexicographically first worker's among
// those visible at generation g; nullptr when none is.
inline const WorkerSave* first_worker_save(const TensorStep& found, std::uint64_t g) {
  const WorkerSave* chosen = nullptr;
  for (const auto& save : found.saves) {
    if (save.generation <= g && (chosen == nullptr || *save.worker < *chosen->worker)) {
      chosen = &save;
    }
  }
  return chosen;
}

}  // namespace rulestream
