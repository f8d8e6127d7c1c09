#include "apps/coordination/rule_event_codec.hpp"

#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace rulestream {
namespace {

namespace json = boost::json;

// The shortest decimal text that reads back as the same double ("nan", "inf", "-inf" too).
std::string exact_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

double exact_value(std::string_view text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument("an encoded rule event: '" + std::string(text) +
                                "' is not a number");
  }
  return value;
}

std::optional<RuleStatus> status_from_name(std::string_view name) {
  for (const RuleStatus status : {RuleStatus::NoIssuesFound, RuleStatus::IssuesFound,
                                  RuleStatus::Error, RuleStatus::NotApplicable}) {
    if (rule_status_name(status) == name) return status;
  }
  return std::nullopt;
}

// The field `name` of `object`, or an error naming it.
const json::value& field(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  if (!value) {
    throw std::invalid_argument("an encoded rule event has no '" + std::string(name) + "'");
  }
  return *value;
}

std::string text_of(const json::object& object, std::string_view name) {
  const json::value& value = field(object, name);
  if (!value.is_string()) {
    throw std::invalid_argument("an encoded rule event's '" + std::string(name) +
                                "' is not a string");
  }
  return std::string(value.get_string());
}

std::int64_t integer_of(const json::object& object, std::string_view name) {
  const json::value& value = field(object, name);
  if (!value.is_int64()) {
    throw std::invalid_argument("an encoded rule event's '" + std::string(name) +
                                "' is not an integer");
  }
  return value.get_int64();
}

}  // namespace

std::string encode_rule_event(const RuleEvent& event) {
  json::object out;
  out["kind"] = RuleEvent::kind_name(event.kind);
  out["time_ns"] = static_cast<std::int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(event.time.time_since_epoch()).count());
  out["trial"] = event.trial;
  out["rule_configuration"] = event.rule_configuration;
  out["rule"] = event.rule;
  out["global_step"] = event.global_step;
  out["mode"] = mode_name(event.mode);
  out["mode_step"] = event.mode_step;
  json::array tensors;
  for (const std::string& tensor : event.tensors) tensors.emplace_back(tensor);
  out["tensors"] = std::move(tensors);
  json::array figures;
  for (const Figure& figure : event.figures) {
    json::object entry{{"name", figure.name}, {"value", exact_text(figure.value)}};
    if (figure.tensor) entry["tensor"] = *figure.tensor;
    figures.emplace_back(std::move(entry));
  }
  out["figures"] = std::move(figures);
  out["message"] = event.message;
  if (event.status) out["status"] = rule_status_name(*event.status);
  out["steps_evaluated"] = event.steps_evaluated;
  out["times_fired"] = event.times_fired;
  out["incidents"] = event.incidents;
  if (event.incident) {
    const IncidentNote& note = *event.incident;
    json::object incident{{"id", note.id},
                          {"state", incident_state_name(note.state)},
                          {"firings", note.firings},
                          {"opened_step", note.opened_step},
                          {"last_step", note.last_step},
                          {"worst_step", note.worst_step}};
    if (note.worst) {
      json::object worst{{"name", note.worst->name}, {"value", exact_text(note.worst->value)}};
      if (note.worst->tensor) worst["tensor"] = *note.worst->tensor;
      incident["worst"] = std::move(worst);
    }
    out["incident"] = std::move(incident);
  }
  return json::serialize(out);
}

RuleEvent decode_rule_event(std::string_view text) {
  boost::system::error_code error;
  const json::value parsed = json::parse(text, error);
  if (error || !parsed.is_object()) {
    throw std::invalid_argument("an encoded rule event is not a JSON object");
  }
  const json::object& in = parsed.get_object();
  RuleEvent event;
  const std::string kind = text_of(in, "kind");
  bool known_kind = false;
  for (const auto candidate : {RuleEvent::Kind::ConditionMet, RuleEvent::Kind::Status,
                               RuleEvent::Kind::IncidentResolved}) {
    if (RuleEvent::kind_name(candidate) == kind) {
      event.kind = candidate;
      known_kind = true;
    }
  }
  if (!known_kind) throw std::invalid_argument("an encoded rule event's kind is '" + kind + "'");
  event.time = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(integer_of(in, "time_ns"))));
  event.trial = text_of(in, "trial");
  event.rule_configuration = text_of(in, "rule_configuration");
  event.rule = text_of(in, "rule");
  event.global_step = integer_of(in, "global_step");
  const std::string mode = text_of(in, "mode");
  const auto parsed_mode = mode_from_name(mode);
  if (!parsed_mode) throw std::invalid_argument("an encoded rule event's mode is '" + mode + "'");
  event.mode = *parsed_mode;
  event.mode_step = integer_of(in, "mode_step");
  const json::value& tensors = field(in, "tensors");
  if (!tensors.is_array()) throw std::invalid_argument("an encoded rule event's tensors");
  for (const json::value& tensor : tensors.get_array()) {
    if (!tensor.is_string()) throw std::invalid_argument("an encoded rule event's tensors");
    event.tensors.emplace_back(tensor.get_string());
  }
  const json::value& figures = field(in, "figures");
  if (!figures.is_array()) throw std::invalid_argument("an encoded rule event's figures");
  for (const json::value& entry : figures.get_array()) {
    if (!entry.is_object()) throw std::invalid_argument("an encoded rule event's figures");
    const json::object& object = entry.get_object();
    Figure figure;
    figure.name = text_of(object, "name");
    figure.value = exact_value(text_of(object, "value"));
    if (object.contains("tensor")) figure.tensor = text_of(object, "tensor");
    event.figures.push_back(std::move(figure));
  }
  event.message = text_of(in, "message");
  if (in.contains("status")) {
    const std::string status = text_of(in, "status");
    event.status = status_from_name(status);
    if (!event.status) {
      throw std::invalid_argument("an encoded rule event's status is '" + status + "'");
    }
  }
  event.steps_evaluated = integer_of(in, "steps_evaluated");
  event.times_fired = integer_of(in, "times_fired");
  // Events encoded before incidents have neither.
  if (in.contains("incidents")) event.incidents = integer_of(in, "incidents");
  if (const json::value* incident = in.if_contains("incident")) {
    if (!incident->is_object()) throw std::invalid_argument("an encoded rule event's incident");
    const json::object& object = incident->get_object();
    IncidentNote note;
    note.id = text_of(object, "id");
    const std::string state = text_of(object, "state");
    bool known_state = false;
    for (const auto candidate : {IncidentNote::State::Opened, IncidentNote::State::Updated,
                                 IncidentNote::State::Resolved}) {
      if (incident_state_name(candidate) == state) {
        note.state = candidate;
        known_state = true;
      }
    }
    if (!known_state) {
      throw std::invalid_argument("an encoded rule event's incident state is '" + state + "'");
    }
    note.firings = integer_of(object, "firings");
    note.opened_step = integer_of(object, "opened_step");
    note.last_step = integer_of(object, "last_step");
    note.worst_step = integer_of(object, "worst_step");
    if (const json::value* worst = object.if_contains("worst")) {
      if (!worst->is_object()) throw std::invalid_argument("an encoded rule event's incident");
      Figure figure;
      figure.name = text_of(worst->get_object(), "name");
      figure.value = exact_value(text_of(worst->get_object(), "value"));
      if (worst->get_object().contains("tensor")) {
        figure.tensor = text_of(worst->get_object(), "tensor");
      }
      note.worst = std::move(figure);
    }
    event.incident = std::move(note);
  }
  return event;
}

}  // namespace rulestream
