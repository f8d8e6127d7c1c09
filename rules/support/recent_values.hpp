#pragma once

// The last few values of a series and the robust figures the judging series rules read from
// them: the median (a level one outlier does not move) and the spread of the values' logarithms
// (a noise that is the same for a loss of 1e-3 and one of 1e3, and that a heavy tail widens).
// Memory is the capacity; each figure costs one partial sort of at most that many values.

#include <cstddef>
#include <vector>

namespace rulestream {

class RecentValues {
 public:
  explicit RecentValues(std::size_t capacity);

  // Keeps `value`, forgetting the oldest once `capacity` are held.
  void add(double value);
  void clear();

  std::size_t size() const { return values_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return values_.empty(); }

  // The median of the values held (the mean of the middle two for an even count); 0 when empty.
  double median() const;
  // The median of the newest `count` values held (all of them when fewer).
  double median_of_newest(std::size_t count) const;
  // log_spread_in_place of the values held.
  double log_spread() const;
  // The noise of the values held, free of their trend: the median absolute change of the
  // logarithm from one value to the next, / 0.954 (for independent normal logarithms with
  // standard deviation s, the difference of two has median absolute value 0.954 s). A loss
  // that falls smoothly from 1.0 to 0.5 over the values held has a wide spread but little
  // noise. Values must be positive; 0 for fewer than two.
  double log_step_noise() const;

 private:
  // The values oldest first.
  std::vector<double> in_order() const;

  std::size_t capacity_;
  std::vector<double> values_;  // a ring once full; next_ is the oldest
  std::size_t next_ = 0;
  mutable std::vector<double> scratch_;
};

// The median of `values`, reordering them; 0 when empty.
double median_in_place(std::vector<double>& values);

// The spread of the logarithms of `values` (positive), replacing them: their interquartile range
// / 1.349, which for normally distributed logarithms is their standard deviation. Quartiles rather
// than the median absolute deviation, which is 0 for a loss whose batches take two values
// (1.0, 2.5, 1.0, 2.5, 1.0). 0 for fewer than two values.
double log_spread_in_place(std::vector<double>& values);

}  // namespace rulestream
