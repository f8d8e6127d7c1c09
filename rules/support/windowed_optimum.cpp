#include "rules/support/windowed_optimum.hpp"

#include <cmath>

namespace rulestream {

void WindowedOptimum::add(double loss, std::int64_t step) {
  if (open_.saves == 0) open_.first_step = step;
  open_.last_step = step;
  open_.mean += loss;
  ++open_.saves;
}

void WindowedOptimum::close_window() {
  if (open_.saves == 0) return;
  WindowMean closed = open_;
  closed.mean /= static_cast<double>(closed.saves);
  open_ = {};
  if (!std::isfinite(closed.mean)) return;

  latest_ = closed;
  stalled_ = best_ && !(closed.mean < best_->mean - delta_);
  if (!stalled_) best_ = closed;
}

}  // namespace rulestream
