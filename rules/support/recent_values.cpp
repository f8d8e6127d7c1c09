#include "rules/support/recent_values.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rulestream {

double median_in_place(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2.0;
}

RecentValues::RecentValues(std::size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("RecentValues needs a capacity of at least 1");
  values_.reserve(capacity);
}

void RecentValues::add(double value) {
  if (values_.size() < capacity_) {
    values_.push_back(value);
    return;
  }
  values_[next_] = value;
  next_ = (next_ + 1) % capacity_;
}

void RecentValues::clear() {
  values_.clear();
  next_ = 0;
}

std::vector<double> RecentValues::in_order() const {
  std::vector<double> ordered;
  ordered.reserve(values_.size());
  for (std::size_t i = 0; i < values_.size(); ++i) {
    ordered.push_back(values_[(next_ + i) % values_.size()]);
  }
  return ordered;
}

double RecentValues::median() const {
  scratch_.assign(values_.begin(), values_.end());
  return median_in_place(scratch_);
}

double RecentValues::median_of_newest(std::size_t count) const {
  if (count >= values_.size()) return median();
  const std::vector<double> ordered = in_order();
  scratch_.assign(ordered.end() - static_cast<std::ptrdiff_t>(count), ordered.end());
  return median_in_place(scratch_);
}

double log_spread_in_place(std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  for (double& value : values) value = std::log(value);
  std::sort(values.begin(), values.end());
  // Quantiles by linear interpolation between the order statistics (numpy's default).
  const auto quantile = [&](double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(position);
    const std::size_t above = std::min(below + 1, values.size() - 1);
    const double weight = position - static_cast<double>(below);
    return values[below] + weight * (values[above] - values[below]);
  };
  return (quantile(0.75) - quantile(0.25)) / 1.349;
}

double RecentValues::log_step_noise() const {
  if (values_.size() < 2) return 0.0;
  const std::vector<double> ordered = in_order();
  scratch_.clear();
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    scratch_.push_back(std::abs(std::log(ordered[i] / ordered[i - 1])));
  }
  return median_in_place(scratch_) / 0.954;
}

double RecentValues::log_spread() const {
  scratch_.assign(values_.begin(), values_.end());
  return log_spread_in_place(scratch_);
}

}  // namespace rulestream
