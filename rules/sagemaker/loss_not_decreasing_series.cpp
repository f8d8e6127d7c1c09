#include "rules/sagemaker/loss_not_decreasing_series.hpp"

#include <utility>
#include <vector>

#include "rules/support/rule_text.hpp"

namespace rulestream {
namespace {

class LossNotDecreasingState final : public SeriesState {
 public:
  LossNotDecreasingState(std::string name, LossNotDecreasingSeries::Options options)
      : name_(std::move(name)), options_(options) {}

  bool add(std::int64_t step, double loss, Finding& finding) override {
    history_.emplace_back(step, loss);
    const std::int64_t reach = step - options_.num_steps;
    // Keep the newest value at least num_steps behind (the next base) and what follows it.
    while (history_.size() - first_ >= 2 && history_[first_ + 1].first <= reach) ++first_;
    if (first_ >= 64 && first_ * 2 >= history_.size()) {  // forget the front now and then
      history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
    }
    if (last_compared_ && step < *last_compared_ + options_.num_steps) return false;
    const auto [base_step, base] = history_[first_];
    if (base_step > reach) return false;
    last_compared_ = step;
    if (!(loss > base * (1.0 - options_.diff_percent / 100.0))) return false;
    const bool rising = loss > base * (1.0 + options_.increase_threshold_percent / 100.0);
    finding.tensors = {name_};
    finding.figures = {{"loss", loss, name_},
                       {"base_loss", base, name_},
                       {"base_step", static_cast<double>(base_step), name_},
                       {"diff_percent", options_.diff_percent, std::nullopt},
                       {"num_steps", static_cast<double>(options_.num_steps), std::nullopt}};
    finding.message =
        name_ + " " + format_figure(loss) + " at step " + std::to_string(step) + " vs " +
        format_figure(base) + " at step " + std::to_string(base_step) + ": changed by " +
        format_figure((loss - base) / base * 100.0) + "%, not decreasing by " +
        format_figure(options_.diff_percent) + "%" +
        (rising ? " (rising: more than " + format_figure(options_.increase_threshold_percent) + "%)"
                : "");
    return true;
  }

 private:
  std::string name_;
  LossNotDecreasingSeries::Options options_;
  // Values from history_[first_] on: a vector whose front is dropped in bulk (a deque's push
  // and pop per value cost a sixth of this rule's time).
  std::vector<std::pair<std::int64_t, double>> history_;
  std::size_t first_ = 0;
  std::optional<std::int64_t> last_compared_;
};

}  // namespace

bool LossNotDecreasingSeries::watches(const SeriesInfo& series) const {
  return (options_.mode == Mode::Global || series.mode == options_.mode) &&
         selection_.watches(series);
}

std::unique_ptr<SeriesState> LossNotDecreasingSeries::start(const SeriesInfo& series) const {
  return std::make_unique<LossNotDecreasingState>(series.display_name(), options_);
}

}  // namespace rulestream
