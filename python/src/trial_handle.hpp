#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include "python/src/bindings.hpp"
#include "trial/api/trial.hpp"

namespace rulestream::python {

// What a Python Trial object holds: the trial, and while a `no_refresh` block (or a Python
// rule's invocation) runs, a pinned view of it that every query goes through instead, so the
// steps and tensors it sees cannot change under it (smdebug's no_refresh). Blocks nest.
// Touched only with the GIL held (it holds Python objects), which serialises Python's calls on
// one object; the Trial handles themselves are safe to use from any thread
// (trial/api/trial.hpp).
class TrialHandle {
 public:
  explicit TrialHandle(Trial trial) : trial_(std::move(trial)) {}

  // The view queries read now: the pinned one inside no_refresh, else the trial itself.
  const Trial& current() const { return pinned_ ? *pinned_ : trial_; }
  const Trial& trial() const { return trial_; }

  bool is_pinned() const { return pinned_.has_value(); }

  void pin() {
    if (depth_++ == 0) pinned_ = trial_.pinned();
  }
  void unpin() {
    if (depth_ == 0) return;
    if (--depth_ == 0) pinned_.reset();
  }

  // The Python Tensors made for the trial itself (not for a pinned view), by name, to hand out
  // again: smdebug's trial.tensor(name) returns one object per name too, and a notebook asks
  // for it once per value (`for step: for name: trial.tensor(name).value(step)`), where making
  // a Tensor cost about half as much as reading a small value (callgrind). An unpinned Tensor
  // sees what the trial sees however old it is, so a kept one never goes stale.
  py::dict& tensors() { return tensors_; }

 private:
  Trial trial_;
  std::optional<Trial> pinned_;
  std::size_t depth_ = 0;
  py::dict tensors_;
};

}  // namespace rulestream::python
