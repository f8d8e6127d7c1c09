#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include "pipeline/trial/trial.hpp"

namespace rulestream::python {

// What a Python Trial object holds: the trial, and while a `no_refresh` block (or a Python
// rule's invocation) runs, a pinned view of it that every query goes through instead, so the
// steps and tensors it sees cannot change under it (smdebug's no_refresh). Blocks nest.
// Touched only with the GIL held, which serialises Python's calls on one object; the Trial
// handles themselves are safe to use from any thread (pipeline/trial/trial.hpp).
class TrialHandle {
 public:
  explicit TrialHandle(Trial trial) : trial_(std::move(trial)) {}

  // The view queries read now: the pinned one inside no_refresh, else the trial itself.
  const Trial& current() const { return pinned_ ? *pinned_ : trial_; }
  const Trial& trial() const { return trial_; }

  void pin() {
    if (depth_++ == 0) pinned_ = trial_.pinned();
  }
  void unpin() {
    if (depth_ == 0) return;
    if (--depth_ == 0) pinned_.reset();
  }

 private:
  Trial trial_;
  std::optional<Trial> pinned_;
  std::size_t depth_ = 0;
};

}  // namespace rulestream::python
