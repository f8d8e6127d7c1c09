#include "core/model/rule_event.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "core/model/python_json.hpp"
#include "core/model/utf8_text.hpp"

namespace rulestream {

namespace {

// JSON has no literal for NaN and the infinities; smdebug's own dumps spell them as strings.
boost::json::value json_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

// "VG (VanishingGradient)", or just "VanishingGradient" when the configuration kept its name.
std::string who(const RuleEvent& event) {
  if (event.rule_configuration.empty() || event.rule_configuration == event.rule) {
    return event.rule;
  }
  return event.rule_configuration + " (" + event.rule + ")";
}

}  // namespace

std::string figure_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  // printf's "%g", as std::to_chars writes it (the same text by definition), without printf's
  // arbitrary-precision digit generation: a replay whose rules fire two million times spent
  // an eighth of its time in printf (benchmarks/RESULTS.md, tensorboard_e2e).
  char buffer[32];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 6);
  return std::string(buffer, result.ptr);
}

std::string_view rule_status_name(RuleStatus status) {
  switch (status) {
    case RuleStatus::NoIssuesFound:
      return "NoIssuesFound";
    case RuleStatus::IssuesFound:
      return "IssuesFound";
    case RuleStatus::Error:
      return "Error";
    case RuleStatus::NotApplicable:
      return "NotApplicable";
  }
  return "Error";
}

std::string_view incident_state_name(IncidentNote::State state) {
  switch (state) {
    case IncidentNote::State::Opened:
      return "opened";
    case IncidentNote::State::Updated:
      return "updated";
    case IncidentNote::State::Resolved:
      return "resolved";
  }
  return "opened";
}

std::string_view RuleEvent::kind_name(Kind kind) {
  switch (kind) {
    case RuleEvent::Kind::ConditionMet:
      return "condition_met";
    case RuleEvent::Kind::Status:
      return "status";
    case RuleEvent::Kind::IncidentResolved:
      return "incident_resolved";
  }
  return "condition_met";
}

namespace {

boost::json::object incident_json(const IncidentNote& incident) {
  boost::json::object out;
  out["id"] = incident.id;
  out["state"] = incident_state_name(incident.state);
  out["firings"] = incident.firings;
  out["opened_step"] = incident.opened_step;
  out["last_step"] = incident.last_step;
  if (incident.worst) {
    boost::json::object worst;
    worst["name"] = incident.worst->name;
    worst["value"] = json_number(incident.worst->value);
    if (incident.worst->tensor) worst["tensor"] = *incident.worst->tensor;
    worst["step"] = incident.worst_step;
    out["worst"] = std::move(worst);
  }
  return out;
}

}  // namespace

std::string RuleEvent::to_json() const {
  boost::json::object out;
  out["time"] = iso8601_utc(time);
  out["kind"] = kind_name(kind);
  out["trial"] = trial;
  out["rule_configuration"] = rule_configuration.empty() ? rule : rule_configuration;
  out["rule"] = rule;
  if (kind != Kind::Status) {
    out["global_step"] = global_step;
    out["mode"] = mode_name(mode);
    out["mode_step"] = mode_step;
    boost::json::array names;
    for (const auto& tensor : tensors) names.emplace_back(tensor);
    out["tensors"] = std::move(names);
    boost::json::array figures_json;
    for (const Figure& figure : figures) {
      boost::json::object entry;
      entry["name"] = figure.name;
      entry["value"] = json_number(figure.value);
      if (figure.tensor) entry["tensor"] = *figure.tensor;
      figures_json.emplace_back(std::move(entry));
    }
    out["figures"] = std::move(figures_json);
    if (incident) out["incident"] = incident_json(*incident);
  } else {
    out["status"] = rule_status_name(status.value_or(RuleStatus::Error));
    out["steps_evaluated"] = steps_evaluated;
    out["times_fired"] = times_fired;
    out["incidents"] = incidents;
  }
  out["message"] = message;
  // Python-style numbers ("1e-07", not Boost's "1E-7"): what smdebug users read and diff.
  try {
    return dump_python_json(out);
  } catch (const std::invalid_argument&) {
    // A trial or tensor name that is not UTF-8 (a folder named in Latin-1) cannot be escaped
    // the Python way; the event still goes out, as JSON, its stray bytes replaced.
    return with_valid_utf8(boost::json::serialize(out));
  }
}

std::string RuleEvent::to_text() const {
  std::string line = iso8601_utc(time) + " " + who(*this);
  if (kind == Kind::ConditionMet) {
    line += " fired at step " + std::to_string(global_step) + " (" + std::string(mode_name(mode)) +
            " " + std::to_string(mode_step) + ") on " + trial;
    if (incident && incident->state == IncidentNote::State::Opened) {
      line += ", incident " + incident->id + " opened";
    }
  } else if (kind == Kind::IncidentResolved) {
    line += " on " + trial + ": incident " + (incident ? incident->id : std::string("?")) +
            " resolved at step " + std::to_string(global_step);
    if (incident) {
      line += " after " + std::to_string(incident->firings) +
              (incident->firings == 1 ? " firing" : " firings") + " (steps " +
              std::to_string(incident->opened_step) + "-" + std::to_string(incident->last_step) +
              ")";
      if (incident->worst) {
        line += ", worst " + incident->worst->name + " " + figure_text(incident->worst->value) +
                " at step " + std::to_string(incident->worst_step);
      }
    }
  } else {
    line +=
        " on " + trial + ": " + std::string(rule_status_name(status.value_or(RuleStatus::Error))) +
        " (fired " + std::to_string(times_fired) + (times_fired == 1 ? " time" : " times") +
        (incidents > 0 && incidents != times_fired
             ? " (" + std::to_string(incidents) + (incidents == 1 ? " incident)" : " incidents)")
             : std::string()) +
        " in " + std::to_string(steps_evaluated) +
        (steps_evaluated == 1 ? " step evaluated)" : " steps evaluated)");
  }
  if (!message.empty()) line += ": " + message;
  // One event, one line, whatever a message holds.
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

}  // namespace rulestream
