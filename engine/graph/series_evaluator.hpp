#pragma once

// One series of scalars fed to the series rules that watch it, with TensorBoard's rule for a run
// restarted from a checkpoint: a value at a step at or below the last one kept replaces the
// kept values from that step on. Rules see one value per step, steps increasing: at a restart
// each rule's state is rebuilt from the series' kept values before the restart step (the last
// memory_points() of them), silently, and the new value is judged against that.
//
// Not thread-safe: one thread at a time feeds one series.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "rules/series_rule.hpp"

namespace rulestream {

// A condition met: which rule (an index into the pipeline's rules), at which step, and why.
// Or, `cleared`, the rule's condition cleared at that step (SeriesState::take_cleared): the
// finding then names the series only.
struct SeriesFinding {
  std::size_t rule = 0;
  std::int64_t step = 0;
  Finding finding;
  bool cleared = false;
};

class SeriesEvaluator {
 public:
  // `rules` are the pipeline's series rules (null where a rule has no series form); those that
  // watch `info` get a state.
  SeriesEvaluator(SeriesInfo info, const std::vector<std::shared_ptr<const SeriesRule>>& rules);

  const SeriesInfo& info() const { return info_; }
  bool watched() const { return !watches_.empty(); }

  // The series' next value in file order; conditions met go to `findings`.
  void add(std::int64_t step, double value, std::vector<SeriesFinding>& findings);

  // Values each rule judged, by rule index (restarts rebuild states without counting again).
  void count_evaluations(std::vector<std::int64_t>& by_rule) const;
  std::int64_t restarts() const { return restarts_; }

 private:
  struct Watch {
    std::size_t rule = 0;
    const SeriesRule* series_rule = nullptr;
    std::unique_ptr<SeriesState> state;
    std::int64_t evaluated = 0;
  };

  void restart_at(std::int64_t step);

  SeriesInfo info_;
  std::vector<Watch> watches_;
  std::size_t keep_ = 0;
  // The last keep_ values, oldest first from kept_head_ (a ring: a deque's push and pop per
  // value cost a sixth of a replay's rule time).
  std::vector<std::pair<std::int64_t, double>> kept_;
  std::size_t kept_head_ = 0;
  std::optional<std::int64_t> last_step_;
  std::int64_t restarts_ = 0;
};

}  // namespace rulestream
