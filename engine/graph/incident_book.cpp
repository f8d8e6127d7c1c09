#include "engine/graph/incident_book.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "rules/default_rules.hpp"

namespace rulestream {
namespace {

// How far `value` strays from `from`: in ratio for values of one sign (a loss up 1e8, a norm
// down 1e4), else in difference.
double distance(double from, double value) {
  if (!std::isfinite(value)) return std::numeric_limits<double>::infinity();
  if (from > 0.0 && value > 0.0) return std::abs(std::log(value / from));
  if (from < 0.0 && value < 0.0) return std::abs(std::log(value / from));
  return std::abs(value - from);
}

}  // namespace

IncidentBook::IncidentBook(std::string configuration_name, const std::string& rule,
                           IncidentPolicy policy, bool clears_itself)
    : configuration_name_(std::move(configuration_name)),
      grouped_(policy.grouped.value_or(judges_by_incident(rule))),
      quiet_steps_(policy.quiet_steps.value_or(clears_itself ? 0 : kDefaultQuietSteps)) {}

std::optional<RuleEvent> IncidentBook::fire(RuleEvent& event) {
  if (!grouped_) return std::nullopt;
  const std::string series = event.tensors.empty() ? std::string() : event.tensors.front();
  std::optional<RuleEvent> resolved;
  auto found = open_.find(series);
  if (found != open_.end() && quiet_steps_ > 0 &&
      event.global_step - found->second.note.last_step >= quiet_steps_) {
    resolved = resolution(series, found->second, found->second.note.last_step + quiet_steps_,
                          "no firing for " + std::to_string(quiet_steps_) + " steps");
    open_.erase(found);
    found = open_.end();
  }
  const std::optional<double> value =
      event.figures.empty() ? std::nullopt : std::optional(event.figures.front().value);
  if (found == open_.end()) {
    Open open;
    open.note.id = configuration_name_ + "/" + (series.empty() ? "-" : series) + "#" +
                   std::to_string(++count_[series]);
    open.note.state = IncidentNote::State::Opened;
    open.note.opened_step = event.global_step;
    open.order = opened_++;
    open.first_message = event.message;
    open.first_value = value;
    if (value) {
      open.note.worst = event.figures.front();
      open.note.worst_step = event.global_step;
    }
    found = open_.emplace(series, std::move(open)).first;
  } else {
    Open& open = found->second;
    open.note.state = IncidentNote::State::Updated;
    if (value && open.first_value && open.note.worst &&
        distance(*open.first_value, *value) > distance(*open.first_value, open.note.worst->value)) {
      open.note.worst = event.figures.front();
      open.note.worst_step = event.global_step;
    }
  }
  IncidentNote& note = found->second.note;
  ++note.firings;
  note.last_step = event.global_step;
  event.incident = note;
  return resolved;
}

std::optional<RuleEvent> IncidentBook::clear(const std::string& series, std::int64_t step,
                                             const std::string& why) {
  const auto found = open_.find(series);
  if (found == open_.end()) return std::nullopt;
  RuleEvent event = resolution(series, found->second, step, why);
  open_.erase(found);
  return event;
}

std::vector<RuleEvent> IncidentBook::close_all(const std::string& why) {
  std::vector<std::pair<std::int64_t, RuleEvent>> ordered;
  for (auto& [series, open] : open_) {
    ordered.emplace_back(open.order, resolution(series, open, open.note.last_step, why));
  }
  open_.clear();
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RuleEvent> events;
  for (auto& [order, event] : ordered) events.push_back(std::move(event));
  return events;
}

RuleEvent IncidentBook::resolution(const std::string& series, Open& open, std::int64_t step,
                                   const std::string& why) const {
  RuleEvent event;
  event.kind = RuleEvent::Kind::IncidentResolved;
  event.global_step = step;
  event.mode_step = step;
  if (!series.empty()) event.tensors = {series};
  event.incident = open.note;
  event.incident->state = IncidentNote::State::Resolved;
  event.message = why + "; it opened with: " + open.first_message;
  return event;
}

}  // namespace rulestream
