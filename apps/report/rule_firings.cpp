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
  if (event.kind == RuleEvent::Kind::Status) return;  // statuses come with the report
  std::lock_guard lock(mutex_);
  if (event.incident) {
    Verdict& verdict = by_incident_[event.incident->id];
    if (verdict.incident.empty()) {
      verdict.configuration = event.rule_configuration;
      verdict.incident = event.incident->id;
      verdict.first_step = event.incident->opened_step;
    }
    verdict.firings = event.incident->firings;
    verdict.last_step = event.incident->last_step;
    if (event.incident->state == IncidentNote::State::Opened) verdict.message = event.message;
    if (event.kind == RuleEvent::Kind::IncidentResolved) {
      // "cleared at step 594; it opened with: ...": the first part says how it ended.
      verdict.resolution = event.message.substr(0, event.message.find("; it opened with: "));
      return;
    }
  }
  if (event.kind != RuleEvent::Kind::ConditionMet) return;
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

std::vector<Verdict> FiringRecorder::verdicts() const {
  std::lock_guard lock(mutex_);
  std::vector<Verdict> verdicts;
  std::map<std::string, bool> grouped;  // configurations whose firings had incidents
  for (const auto& [id, verdict] : by_incident_) {
    verdicts.push_back(verdict);
    grouped[verdict.configuration] = true;
  }
  for (const auto& [configuration, firings] : by_configuration_) {
    if (grouped.contains(configuration) || firings.steps.empty()) continue;
    Verdict verdict;
    verdict.configuration = configuration;
    verdict.first_step = firings.first_step;
    verdict.last_step = *std::max_element(firings.steps.begin(), firings.steps.end());
    verdict.firings = static_cast<std::int64_t>(firings.steps.size());
    verdict.message = firings.first_message;
    verdicts.push_back(std::move(verdict));
  }
  std::stable_sort(verdicts.begin(), verdicts.end(),
                   [](const Verdict& a, const Verdict& b) { return a.first_step < b.first_step; });
  return verdicts;
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
