#pragma once

// TensorBoard's rule for a series whose steps go back (a run restarted from a checkpoint, or a
// tag written twice): a value at a step at or below the last one kept replaces every kept value
// from its step on. Kept steps then rise strictly, each with one value, and what a restart
// rewrote beyond its last step is gone too: a run written to step 99 and resumed at step 50
// that stopped at 60 keeps 0..60, not 61..99 of the first pass.
//
// The one place the rule is written for values kept in full (the report's charts, Python's
// series); SeriesEvaluator applies it to the few values its rules remember.

#include <cstddef>
#include <utility>
#include <vector>

namespace rulestream {

// Appends `point` (anything with a `step`) to `kept`, a series in file order, by the rule
// above. Returns how many kept values it replaced.
template <typename Point>
std::size_t keep_by_restart_rule(std::vector<Point>& kept, Point point) {
  std::size_t replaced = 0;
  while (!kept.empty() && kept.back().step >= point.step) {
    kept.pop_back();
    ++replaced;
  }
  kept.push_back(std::move(point));
  return replaced;
}

}  // namespace rulestream
