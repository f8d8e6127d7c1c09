#include "tests/support/prometheus_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>

namespace rulestream::testing {
namespace {

bool is_name_start(char c, bool colon_allowed) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (colon_allowed && c == ':');
}

bool is_name_char(char c, bool colon_allowed) {
  return is_name_start(c, colon_allowed) || (c >= '0' && c <= '9');
}

bool is_metric_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0], true)) return false;
  for (const char c : name) {
    if (!is_name_char(c, true)) return false;
  }
  return true;
}

// Reads a name ([a-zA-Z_][a-zA-Z0-9_]*, colons too for metric names) from `rest`, consuming it.
std::string take_name(std::string_view& rest, bool colon_allowed) {
  std::size_t length = 0;
  if (!rest.empty() && is_name_start(rest[0], colon_allowed)) {
    while (length < rest.size() && is_name_char(rest[length], colon_allowed)) ++length;
  }
  std::string name(rest.substr(0, length));
  rest.remove_prefix(length);
  return name;
}

double parse_value(std::string_view text) {
  if (text == "NaN") return std::nan("");
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw std::invalid_argument("'" + std::string(text) + "' is not a sample value");
  }
  return value;
}

std::map<std::string, std::string> parse_labels(std::string_view& rest) {
  std::map<std::string, std::string> labels;
  rest.remove_prefix(1);  // '{'
  while (true) {
    if (!rest.empty() && rest[0] == '}') {
      rest.remove_prefix(1);
      return labels;
    }
    const std::string name = take_name(rest, false);
    if (name.empty()) throw std::invalid_argument("a label name is missing or malformed");
    if (rest.size() < 2 || rest[0] != '=' || rest[1] != '"') {
      throw std::invalid_argument("label " + name + " is not followed by =\"");
    }
    rest.remove_prefix(2);
    std::string value;
    while (true) {
      if (rest.empty()) throw std::invalid_argument("label " + name + "'s value is not closed");
      const char c = rest[0];
      rest.remove_prefix(1);
      if (c == '"') break;
      if (c == '\n') throw std::invalid_argument("a raw line feed in label " + name);
      if (c == '\\') {
        if (rest.empty()) throw std::invalid_argument("a dangling backslash in label " + name);
        const char escaped = rest[0];
        rest.remove_prefix(1);
        if (escaped == '\\') {
          value += '\\';
        } else if (escaped == '"') {
          value += '"';
        } else if (escaped == 'n') {
          value += '\n';
        } else {
          throw std::invalid_argument(std::string("an unknown escape \\") + escaped + " in label " +
                                      name);
        }
        continue;
      }
      value += c;
    }
    if (!labels.emplace(name, std::move(value)).second) {
      throw std::invalid_argument("label " + name + " given twice");
    }
    if (!rest.empty() && rest[0] == ',') {
      rest.remove_prefix(1);
    } else if (rest.empty() || rest[0] != '}') {
      throw std::invalid_argument("labels are not separated by ',' or closed by '}'");
    }
  }
}

// The family a sample of this name belongs to, given the family's type.
bool belongs(std::string_view sample, const PrometheusFamily& family) {
  if (sample == family.name) return family.type != "histogram";
  if (family.type == "histogram" || family.type == "summary") {
    for (const std::string_view suffix : {"_sum", "_count"}) {
      if (sample == family.name + std::string(suffix)) return true;
    }
    if (family.type == "histogram" && sample == family.name + "_bucket") return true;
  }
  return false;
}

}  // namespace

const PrometheusFamily* PrometheusText::family(std::string_view name) const {
  for (const auto& each : families) {
    if (each.name == name) return &each;
  }
  return nullptr;
}

double PrometheusText::value(std::string_view name,
                             const std::map<std::string, std::string>& labels) const {
  for (const auto& each : families) {
    for (const auto& sample : each.samples) {
      if (sample.name == name && sample.labels == labels) return sample.value;
    }
  }
  std::string wanted(name);
  for (const auto& [label, value] : labels) wanted += " " + label + "=" + value;
  throw std::out_of_range("no sample " + wanted);
}

PrometheusText parse_prometheus_text(std::string_view text) {
  if (!text.empty() && text.back() != '\n') {
    const auto lines = std::count(text.begin(), text.end(), '\n') + 1;
    throw std::invalid_argument("line " + std::to_string(lines) +
                                ": the text does not end in a line feed");
  }
  PrometheusText parsed;
  std::set<std::string> families_seen;
  std::set<std::pair<std::string, std::map<std::string, std::string>>> series_seen;
  PrometheusFamily* current = nullptr;
  const auto family_named = [&](const std::string& name) -> PrometheusFamily& {
    if (current && current->name == name) return *current;
    if (!families_seen.insert(name).second) {
      throw std::invalid_argument("family " + name + " appears in two places");
    }
    parsed.families.push_back({name, "untyped", "", {}});
    current = &parsed.families.back();
    return *current;
  };
  std::size_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    try {
      if (line.empty()) continue;
      if (line[0] == '#') {
        std::string_view rest = line.substr(1);
        if (!rest.starts_with(" HELP ") && !rest.starts_with(" TYPE ")) continue;  // a comment
        const bool is_type = rest.starts_with(" TYPE ");
        rest.remove_prefix(6);
        const std::string name = take_name(rest, true);
        if (!is_metric_name(name)) throw std::invalid_argument("a malformed metric name");
        if (rest.empty() || rest[0] != ' ')
          throw std::invalid_argument(name + ": no text after it");
        rest.remove_prefix(1);
        PrometheusFamily& family = family_named(name);
        if (!family.samples.empty()) {
          throw std::invalid_argument(name + ": HELP or TYPE after its samples");
        }
        if (is_type) {
          static const std::set<std::string_view> kTypes{"counter", "gauge", "histogram", "summary",
                                                         "untyped"};
          if (!kTypes.contains(rest)) throw std::invalid_argument(name + ": unknown type");
          if (family.type != "untyped") throw std::invalid_argument(name + ": TYPE twice");
          family.type = std::string(rest);
          if (family.type == "counter" && !name.ends_with("_total")) {
            throw std::invalid_argument(name + ": a counter's name must end in _total");
          }
        } else {
          if (!family.help.empty()) throw std::invalid_argument(name + ": HELP twice");
          family.help = std::string(rest);
        }
        continue;
      }
      std::string_view rest = line;
      PrometheusSample sample;
      sample.name = take_name(rest, true);
      if (sample.name.empty()) throw std::invalid_argument("a sample without a metric name");
      if (!rest.empty() && rest[0] == '{') sample.labels = parse_labels(rest);
      if (rest.empty() || rest[0] != ' ') throw std::invalid_argument("no value after the name");
      rest.remove_prefix(1);
      const std::size_t space = rest.find(' ');
      sample.value = parse_value(rest.substr(0, space));
      if (space != std::string_view::npos) {
        const std::string_view stamp = rest.substr(space + 1);
        std::int64_t ignored = 0;
        const auto [stop, error] =
            std::from_chars(stamp.data(), stamp.data() + stamp.size(), ignored);
        if (error != std::errc() || stop != stamp.data() + stamp.size() || stamp.empty()) {
          throw std::invalid_argument("'" + std::string(stamp) + "' is not a timestamp");
        }
      }
      PrometheusFamily* family = nullptr;
      if (current && belongs(sample.name, *current)) {
        family = current;
      } else if (current && current->name == sample.name) {
        throw std::invalid_argument(sample.name +
                                    ": a histogram's samples are _bucket, _sum and _count");
      } else {
        family = &family_named(sample.name);
      }
      if (family->type == "counter" && !(sample.value >= 0)) {
        throw std::invalid_argument(sample.name + ": a counter below zero or NaN");
      }
      if (!series_seen.emplace(sample.name, sample.labels).second) {
        throw std::invalid_argument(sample.name + ": the same series twice");
      }
      family->samples.push_back(std::move(sample));
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("line " + std::to_string(number) + ": " + error.what());
    }
  }
  return parsed;
}

}  // namespace rulestream::testing
