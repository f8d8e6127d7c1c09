#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "trial/api/trial.hpp"

namespace rulestream {

// What a rule keeps of each tensor from step to step (its saved steps, kept screens, a held
// value), for a rule that moves each tensor on in parallel ranges: the states of a step's
// tensors are found first, on the rule's thread, and each is then worked on by one thread.
// Keyed by the store's copy of the name (TensorRef::name(): one string per tensor for as long as
// the trial lives). A job saves the same tensors step after step, so the list of states of the
// last step is kept: the same tensors in the same order cost one pointer comparison each, not a
// lookup (a lookup per tensor per step was most of what stayed serial in UnchangedTensor).
//
// Concurrency: of() from one thread at a time; the states it returns from any threads, each
// from one at a time. Their addresses stay valid for the object's life (map nodes never move).
template <typename State>
class TensorStates {
 public:
  // The state of each of `refs`, in their order; made(name, state) is called for each state
  // made now (a tensor not seen before).
  template <typename Made>
  const std::vector<State*>& of(std::span<const TensorRef> refs, const Made& made) {
    bool same = refs.size() == last_names_.size();
    for (std::size_t i = 0; same && i < refs.size(); ++i) same = &refs[i].name() == last_names_[i];
    if (same) return last_states_;
    last_names_.resize(refs.size());
    last_states_.resize(refs.size());
    for (std::size_t i = 0; i < refs.size(); ++i) {
      last_names_[i] = &refs[i].name();
      const auto [it, added] = states_.try_emplace(last_names_[i]);
      if (added) made(last_names_[i], it->second);
      last_states_[i] = &it->second;
    }
    return last_states_;
  }
  const std::vector<State*>& of(std::span<const TensorRef> refs) {
    return of(refs, [](const std::string*, State&) {});
  }

 private:
  std::unordered_map<const std::string*, State> states_;
  std::vector<const std::string*> last_names_;
  std::vector<State*> last_states_;
};

}  // namespace rulestream
