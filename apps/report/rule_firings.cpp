#include "apps/report/rule_firings.hpp"

#include <algorithm>

namespace rulestream {
namespace {

class RecordingSink final : public Sink {
 public:
  explicit RecordingSink(FiringRecorder& recorder) : recorder_(recorder) {}
  std::string describe() const override { return "report"; }
  void write(const RuleEvent& event) override { recorder_.record(event); }
  void flush() override {}

 private:
  FiringRecorder& recorder_;
};

}  // namespace

std::unique_ptr<Sink> FiringRecorder::sink() {
  return std::make_unique<RecordingSink>(*this);
}

void FiringRecorder::record(const RuleEvent& event) {
  if (event.kind != RuleEvent::Kind::ConditionMet) return;  // statuses come with the report
  std::lock_guard lock(mutex_);
  Firings& firings = by_configuration_[event.rule_configuration];
  // Runs of a TensorBoard job are read in parallel: steps may arrive out of order.
  if (firings.steps.empty() || event.global_step < firings.first_step) {
    firings.first_step = event.global_step;
    firings.first_message = event.message;
  }
  firings.steps.push_back(event.global_step);
}

std::vector<RuleOutcome> FiringRecorder::outcomes(const std::vector<RuleEvent>& statuses) const {
  std::lock_guard lock(mutex_);
  std::vector<RuleOutcome> rows;
  for (const RuleEvent& status : statuses) {
    RuleOutcome row;
    row.configuration = status.rule_configuration;
    row.rule = status.rule;
    row.status = status.status ? std::string(rule_status_name(*status.status)) : "unknown";
    row.finding = status.message;
    const auto found = by_configuration_.find(status.rule_configuration);
    if (found != by_configuration_.end() && !found->second.steps.empty()) {
      row.firing_steps = found->second.steps;
      std::sort(row.firing_steps.begin(), row.firing_steps.end());
      row.firings = static_cast<std::int64_t>(row.firing_steps.size());
      row.first_step = row.firing_steps.front();
      row.last_step = row.firing_steps.back();
      row.finding = found->second.first_message;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::int64_t> FiringRecorder::all_firing_steps() const {
  std::lock_guard lock(mutex_);
  std::vector<std::int64_t> steps;
  for (const auto& [configuration, firings] : by_configuration_) {
    steps.insert(steps.end(), firings.steps.begin(), firings.steps.end());
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

}  // namespace rulestream
