#include "engine/graph/rules_file.hpp"

#include <boost/json.hpp>
#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/model/exceptions.hpp"
#include "core/model/python_json.hpp"
#include "engine/graph/stop_action.hpp"
#include "rules/default_rules.hpp"
#include "stages/format/json_document.hpp"
#include "stages/series/series_naming.hpp"

namespace rulestream {
namespace {

std::string parameter_text(const boost::json::value& value, const std::string& where) {
  if (value.is_string()) return std::string(value.as_string());
  if (value.is_bool()) return value.as_bool() ? "True" : "False";
  if (value.is_int64()) return std::to_string(value.as_int64());
  if (value.is_uint64()) return std::to_string(value.as_uint64());
  if (value.is_double()) {
    std::string text;
    append_python_float(text, value.as_double());
    return text;
  }
  throw FormatError(where, "a rule parameter must be a string, number or boolean");
}

// A process id from a number or a string of digits: positive only (0 and -1 would signal a
// whole process group, or every process we may signal).
std::int64_t parse_pid(const boost::json::value& value, const std::string& where) {
  std::int64_t pid = 0;
  if (value.is_int64()) {
    pid = value.as_int64();
  } else if (value.is_uint64()) {
    pid = value.as_uint64() > std::uint64_t{INT32_MAX}
              ? 0
              : static_cast<std::int64_t>(value.as_uint64());
  } else if (value.is_string()) {
    const std::string_view text = value.as_string();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) pid = 0;
  } else {
    throw FormatError(where, "pid must be a process id (a positive integer)");
  }
  if (pid <= 0 || pid > INT32_MAX) {
    throw FormatError(where, "pid must be a process id (a positive integer), not " +
                                 boost::json::serialize(value));
  }
  return pid;
}

StopAction parse_stop_action(const boost::json::object& action, const std::string& where) {
  StopAction stop;
  for (const auto& [key, value] : action) {
    if (key == "type") continue;
    if (key == "pid") {
      stop.pid = parse_pid(value, where);
    } else if (key == "signal") {
      if (!value.is_string() && !value.is_int64()) {
        throw FormatError(where, "signal must be a name (\"SIGTERM\") or a number");
      }
      try {
        stop.signal = parse_signal(value.is_string() ? std::string(value.as_string())
                                                     : std::to_string(value.as_int64()));
      } catch (const std::invalid_argument& error) {
        throw FormatError(where, error.what());
      }
    } else if (key == "command") {
      if (!value.is_string() || value.as_string().empty()) {
        throw FormatError(where, "command must be a non-empty string (run through /bin/sh)");
      }
      stop.command = std::string(value.as_string());
    } else {
      throw FormatError(where, "unknown key '" + std::string(key) +
                                   "' in a stop action (known: type, pid, signal, command)");
    }
  }
  if (stop.pid.has_value() == !stop.command.empty()) {
    throw FormatError(where,
                      "a stop action needs either \"pid\" (with an optional \"signal\", "
                      "default SIGTERM) or \"command\", not both or neither");
  }
  if (!stop.pid && action.contains("signal")) {
    throw FormatError(where, "signal goes with pid, not with command");
  }
  return stop;
}

std::vector<std::string> parse_notify_action(const boost::json::object& action,
                                             const std::string& where) {
  std::vector<std::string> sinks;
  for (const auto& [key, value] : action) {
    if (key == "type") continue;
    if (key != "sinks") {
      throw FormatError(
          where, "unknown key '" + std::string(key) + "' in a notify action (known: type, sinks)");
    }
    if (!value.is_array()) throw FormatError(where, "sinks must be an array of sink names");
    for (const auto& name : value.as_array()) {
      if (!name.is_string() || name.as_string().empty()) {
        throw FormatError(where, "sinks must be an array of sink names (non-empty strings)");
      }
      sinks.emplace_back(name.as_string());
    }
  }
  if (sinks.empty()) throw FormatError(where, "a notify action needs \"sinks\": [names...]");
  return sinks;
}

// "Actions": [{"type": "stop", ...}, {"type": "notify", ...}], beside RuleParameters.
void parse_actions(const boost::json::value& actions, const std::string& where,
                   RuleConfig& config) {
  if (!actions.is_array()) throw FormatError(where, "Actions must be an array");
  for (std::size_t i = 0; i < actions.as_array().size(); ++i) {
    const std::string at = where + " action " + std::to_string(i);
    const auto& entry = actions.as_array()[i];
    if (!entry.is_object()) throw FormatError(at, "expected an object with a \"type\"");
    const auto& action = entry.as_object();
    const auto* type = action.if_contains("type");
    const std::string name =
        type != nullptr && type->is_string() ? std::string(type->as_string()) : "";
    if (name == "stop") {
      config.stop_actions.push_back(parse_stop_action(action, at));
    } else if (name == "notify") {
      for (auto& sink : parse_notify_action(action, at)) config.notify_sinks.push_back(sink);
    } else {
      throw FormatError(at,
                        (type == nullptr ? std::string("the action has no type")
                                         : "unknown action type " + boost::json::serialize(*type)) +
                            " (known: stop, notify)");
    }
  }
}

// "Incidents": {"Grouping": "series" | "none", "QuietSteps": 100}: how a rule's firings group
// into incidents (IncidentPolicy); each key optional, any other an error.
void parse_incidents(const boost::json::value& value, const std::string& where,
                     IncidentPolicy& policy) {
  if (!value.is_object()) throw FormatError(where, "Incidents must be an object");
  for (const auto& [key, setting] : value.as_object()) {
    if (key == "Grouping") {
      const std::string grouping = setting.is_string() ? std::string(setting.as_string()) : "";
      if (grouping != "series" && grouping != "none") {
        throw FormatError(where, "Incidents.Grouping must be \"series\" or \"none\"");
      }
      policy.grouped = grouping == "series";
    } else if (key == "QuietSteps") {
      if (!setting.is_int64() || setting.as_int64() < 0) {
        throw FormatError(where, "Incidents.QuietSteps must be a whole number of steps, 0 or more");
      }
      policy.quiet_steps = setting.as_int64();
    } else {
      throw FormatError(
          where, "Incidents has no key '" + std::string(key) + "' (known: Grouping, QuietSteps)");
    }
  }
}

RuleConfig parse_rule(const boost::json::value& entry, const std::string& path, std::size_t i) {
  const std::string where = path + ": rule " + std::to_string(i);
  if (!entry.is_object()) throw FormatError(where, "expected an object");
  const auto& object = entry.as_object();
  RuleConfig config;
  if (const auto* name = object.if_contains("RuleConfigurationName")) {
    if (!name->is_string()) throw FormatError(where, "RuleConfigurationName must be a string");
    config.configuration_name = std::string(name->as_string());
  }
  const auto* parameters = object.if_contains("RuleParameters");
  if (parameters == nullptr || !parameters->is_object()) {
    throw FormatError(where, "RuleParameters (an object with rule_to_invoke) is missing");
  }
  for (const auto& [key, value] : parameters->as_object()) {
    const std::string text = parameter_text(value, where + " parameter " + std::string(key));
    if (key == "rule_to_invoke") {
      config.rule = text;
    } else if (key != "source_s3_uri") {
      config.parameters[std::string(key)] = text;
    }
  }
  if (config.rule.empty()) throw FormatError(where, "RuleParameters.rule_to_invoke is missing");
  if (const auto* incidents = object.if_contains("Incidents")) {
    parse_incidents(*incidents, where, config.incidents);
  }
  if (const auto* actions = object.if_contains("Actions")) {
    parse_actions(
        *actions,
        where + " (" +
            (config.configuration_name.empty() ? config.rule : config.configuration_name) + ")",
        config);
  }
  return config;
}

// What an unknown sink type's error lists as known.
std::string known_sink_types(const SinkRegistry& sink_types, const std::string& builtins) {
  std::string known = builtins;
  for (const auto& type : sink_types.types()) known += ", " + type;
  return known;
}

// {"type": "alertmanager", "url": "http://alertmanager:9093", "resend_interval": 60,
//  "severity": "critical", "generator_url": "...", "bearer_token_file": "...",
//  "dead_letter_path": "..."}: every key but the url optional, a misspelt one an error (a
// severity or token silently dropped would page the wrong way, or not at all).
void parse_alertmanager_sink(const boost::json::object& object, const std::string& where,
                             SinkConfig& sink) {
  for (const auto& [key, value] : object) {
    const std::string name(key);
    if (name == "type" || name == "name") continue;
    const bool seconds = name == "resend_interval";
    if (seconds && value.is_number()) {
      sink.parameters[name] = boost::json::serialize(value);
      continue;
    }
    if (!value.is_string()) {
      throw FormatError(where,
                        name + (seconds ? " must be a number of seconds" : " must be a string"));
    }
    const std::string text(value.as_string());
    if (name == "url") {
      sink.target = text;
    } else if (name == "dead_letter_path") {
      sink.dead_letter_path = text;
    } else if (seconds || name == "severity" || name == "generator_url" ||
               name == "bearer_token_file") {
      sink.parameters[name] = text;
    } else {
      throw FormatError(where, "unknown key '" + name +
                                   "' in an alertmanager sink (known: url, resend_interval, "
                                   "severity, generator_url, bearer_token_file, dead_letter_path)");
    }
  }
  if (sink.target.empty()) throw FormatError(where, "an alertmanager sink needs a url");
}

SinkConfig parse_sink(const boost::json::value& entry, const std::string& path, std::size_t i,
                      const SinkRegistry& sink_types) {
  const std::string where = path + ": sink " + std::to_string(i);
  if (!entry.is_object()) throw FormatError(where, "expected an object");
  const auto& object = entry.as_object();
  auto text = [&](const char* key) -> std::string {
    const auto* value = object.if_contains(key);
    if (value == nullptr) return {};
    if (!value->is_string()) throw FormatError(where, std::string(key) + " must be a string");
    return std::string(value->as_string());
  };
  auto flag = [&](const char* key) {
    const auto* value = object.if_contains(key);
    return value != nullptr && value->is_bool() && value->as_bool();
  };
  SinkConfig sink;
  sink.name = text("name");
  sink.type = text("type");
  if (sink.type == "stdout") {
    sink.json = text("format") == "json";
  } else if (sink.type == "file") {
    sink.target = text("path");
    if (sink.target.empty()) throw FormatError(where, "a file sink needs a path");
  } else if (sink.type == "webhook") {
    sink.target = text("url");
    sink.slack = flag("slack");
    sink.dead_letter_path = text("dead_letter_path");
    if (sink.target.empty()) throw FormatError(where, "a webhook sink needs a url");
  } else if (sink.type == "alertmanager") {
    parse_alertmanager_sink(object, where, sink);
  } else if (sink_types.find(sink.type) != nullptr) {
    for (const auto& [key, value] : object) {
      if (key == "type" || key == "name") continue;
      sink.parameters[std::string(key)] = text(std::string(key).c_str());
    }
    sink.target = sink.type;  // how notify actions and messages name it, unless it has a name
  } else {
    throw FormatError(
        where, "unknown sink type '" + sink.type + "' (known: " +
                   known_sink_types(sink_types, "stdout, file, webhook, alertmanager") + ")");
  }
  return sink;
}

// "tensorboard": {"loss": ["regex", ...], ...}: each key one SeriesNaming::keys() names, each
// pattern checked to compile here, before anything is read.
std::map<std::string, std::vector<std::string>> parse_tensorboard_names(
    const boost::json::value& value, const std::string& path) {
  const std::string where = path + ": tensorboard";
  if (!value.is_object()) throw FormatError(where, "expected an object of tag pattern lists");
  std::map<std::string, std::vector<std::string>> names;
  SeriesNaming check = SeriesNaming::defaults();  // where each list is tried
  for (const auto& [key, patterns] : value.as_object()) {
    const std::string name(key);
    if (!patterns.is_array()) throw FormatError(where, name + " must be an array of regexes");
    std::vector<std::string> list;
    for (const auto& pattern : patterns.as_array()) {
      if (!pattern.is_string()) throw FormatError(where, name + " must be an array of regexes");
      list.emplace_back(pattern.as_string());
    }
    try {
      check.replace(name, list);
    } catch (const std::invalid_argument& error) {  // RegexError included
      throw FormatError(where, error.what());
    }
    names[name] = std::move(list);
  }
  return names;
}

// "plugins": ["my_rules.so", ...]; a relative path is taken from the rules file's folder, so
// that a rules file and its plugins move together.
std::vector<std::string> parse_plugins(const boost::json::value& plugins, const std::string& path) {
  const auto invalid = [&] {
    return FormatError(path, "plugins must be an array of plugin file paths (non-empty strings)");
  };
  if (!plugins.is_array()) throw invalid();
  std::vector<std::string> files;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  for (const auto& entry : plugins.as_array()) {
    if (!entry.is_string() || entry.as_string().empty()) throw invalid();
    const std::filesystem::path file(std::string(entry.as_string()));
    files.push_back(file.is_absolute() ? file.string() : (folder / file).string());
  }
  return files;
}

}  // namespace

std::vector<std::string> rules_file_plugins(std::string_view json, const std::string& path) {
  const boost::json::value document = parse_json_document(json, path);
  if (!document.is_object()) return {};
  const auto* plugins = document.as_object().if_contains("plugins");
  return plugins != nullptr ? parse_plugins(*plugins, path) : std::vector<std::string>{};
}

RulesFile parse_rules_file(std::string_view json, const std::string& path,
                           const SinkRegistry& sink_types) {
  const boost::json::value document = parse_json_document(json, path);
  RulesFile file;
  const boost::json::array* rules = nullptr;
  if (document.is_array()) {
    rules = &document.as_array();
  } else if (document.is_object()) {
    const auto& object = document.as_object();
    for (const char* key : {"rules", "DebugRuleConfigurations"}) {
      if (const auto* value = object.if_contains(key)) {
        if (!value->is_array()) throw FormatError(path, std::string(key) + " must be an array");
        rules = &value->as_array();
      }
    }
    if (const auto* names = object.if_contains("tensorboard")) {
      file.tensorboard_names = parse_tensorboard_names(*names, path);
    }
    if (const auto* plugins = object.if_contains("plugins")) {
      file.plugins = parse_plugins(*plugins, path);
    }
    if (const auto* sinks = object.if_contains("sinks")) {
      if (!sinks->is_array()) throw FormatError(path, "sinks must be an array");
      for (std::size_t i = 0; i < sinks->as_array().size(); ++i) {
        file.sinks.push_back(parse_sink(sinks->as_array()[i], path, i, sink_types));
      }
    }
  }
  if (rules == nullptr) {
    throw FormatError(path,
                      "expected an array of rule configurations, or an object with "
                      "\"rules\" or \"DebugRuleConfigurations\"");
  }
  for (std::size_t i = 0; i < rules->size(); ++i) {
    const boost::json::value& entry = (*rules)[i];
    if (entry.is_string() && entry.as_string() == kDefaultRulesName) {
      for (RuleConfig& config : default_rule_configs()) file.rules.push_back(std::move(config));
      continue;
    }
    file.rules.push_back(parse_rule(entry, path, i));
  }
  return file;
}

std::vector<RuleConfig> default_rule_configs() {
  std::vector<RuleConfig> configs;
  for (const std::string& name : default_rule_names()) {
    RuleConfig config;
    config.configuration_name = name;
    config.rule = name;
    config.only_where_applicable = true;
    configs.push_back(std::move(config));
  }
  return configs;
}

RuleConfig parse_rule_argument(const std::string& argument) {
  RuleConfig config;
  const auto colon = argument.find(':');
  config.rule = argument.substr(0, colon);
  if (config.rule.empty()) throw std::invalid_argument("--rule '" + argument + "': no rule name");
  if (colon == std::string::npos) return config;
  std::string_view rest(argument);
  rest.remove_prefix(colon + 1);
  // List parameters are comma-separated too: a piece without '=' continues the value before
  // it, so "collection_names=weights,gradients,only_nan=True" holds two parameters.
  std::string* value = nullptr;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view piece = rest.substr(0, comma);
    const auto equals = piece.find('=');
    if (equals == std::string_view::npos && value != nullptr) {
      *value += ',';
      *value += piece;
    } else {
      if (equals == std::string_view::npos || equals == 0) {
        throw std::invalid_argument("--rule '" + argument + "': expected key=value, got '" +
                                    std::string(piece) + "'");
      }
      const std::string key(piece.substr(0, equals));
      value = key == "name" ? &config.configuration_name : &config.parameters[key];
      *value = std::string(piece.substr(equals + 1));
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return config;
}

SinkConfig parse_sink_argument(const std::string& argument, const SinkRegistry& sink_types) {
  SinkConfig sink;
  const auto colon = argument.find(':');
  const std::string type = argument.substr(0, colon);
  const std::string target = colon == std::string::npos ? "" : argument.substr(colon + 1);
  if (type == "stdout") {
    sink.type = "stdout";
    if (!target.empty() && target != "json" && target != "text") {
      throw std::invalid_argument("--sink stdout takes 'json' or 'text', not '" + target + "'");
    }
    sink.json = target == "json";
  } else if (type == "file" || type == "webhook" || type == "slack" || type == "alertmanager") {
    if (target.empty()) throw std::invalid_argument("--sink " + type + " needs a target after ':'");
    sink.type = type == "slack" ? "webhook" : type;
    sink.slack = type == "slack";
    sink.target = target;
  } else if (sink_types.find(type) != nullptr) {
    sink.type = type;
    sink.target = colon == std::string::npos ? type : target;
    if (colon != std::string::npos) sink.parameters["target"] = target;
  } else {
    throw std::invalid_argument(
        "--sink '" + type + "': unknown sink (" +
        known_sink_types(sink_types,
                         "stdout[:json], file:PATH, webhook:URL, slack:URL, alertmanager:URL") +
        ")");
  }
  return sink;
}

RulesFile read_rules_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StorageError(path + ": cannot read the rules file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_rules_file(text.str(), path);
}

}  // namespace rulestream
