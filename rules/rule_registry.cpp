#include "rules/rule_registry.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/model/name_regex.hpp"
#include "rules/builtin_rules.hpp"

namespace rulestream {
namespace {

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text)
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

// Users write rule names as SageMaker's docs (VanishingGradient), as the Python SDK's
// rule_configs (vanishing_gradient), or anything in between: compare without case or '_'.
std::string lookup_key(std::string_view name) {
  std::string key;
  for (const char c : trim(name)) {
    if (c == '_') continue;
    key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return key;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

// The parameter that chose the rule in a SageMaker rule configuration; never the rule's own.
constexpr std::string_view kRuleToInvoke = "rule_to_invoke";

}  // namespace

// --- ParameterReader -------------------------------------------------------------------------

ParameterReader::ParameterReader(std::string rule, const RuleParameters& parameters)
    : rule_(std::move(rule)), parameters_(parameters) {}

RuleConfigError ParameterReader::invalid(const std::string& name,
                                         const std::string& problem) const {
  const auto it = parameters_.find(name);
  const std::string value = it == parameters_.end() ? std::string() : it->second;
  return RuleConfigError("rule " + rule_ + ": parameter " + name + ": \"" + value + "\" " +
                         problem);
}

double ParameterReader::number(const std::string& name, double fallback) {
  read_.push_back(name);
  const auto it = parameters_.find(name);
  if (it == parameters_.end()) return fallback;
  std::string_view text = trim(it->second);
  // Python's float() accepts a leading '+'; from_chars does not.
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw invalid(name, "is not a number");
  }
  if (!std::isfinite(value)) throw invalid(name, "is not a finite number");
  return value;
}

double ParameterReader::percentage(const std::string& name, double fallback) {
  const double value = number(name, fallback);
  if (value < 0.0 || value > 100.0) throw invalid(name, "is not a percentage between 0 and 100");
  return value;
}

std::int64_t ParameterReader::integer(const std::string& name, std::int64_t fallback) {
  read_.push_back(name);
  const auto it = parameters_.find(name);
  if (it == parameters_.end()) return fallback;
  std::string_view text = trim(it->second);
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) throw invalid(name, "is out of range");
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw invalid(name, "is not an integer");
  }
  return value;
}

// True when a parameter documented with the default None was left at it.
bool ParameterReader::is_none(const std::string& name) const {
  const auto it = parameters_.find(name);
  if (it == parameters_.end()) return true;
  const std::string_view text = trim(it->second);
  return text.empty() || lowercase(text) == "none";
}

std::optional<double> ParameterReader::optional_number(const std::string& name) {
  if (is_none(name)) {
    read_.push_back(name);
    return std::nullopt;
  }
  return number(name, 0.0);
}

std::optional<std::int64_t> ParameterReader::optional_integer(const std::string& name) {
  if (is_none(name)) {
    read_.push_back(name);
    return std::nullopt;
  }
  return integer(name, 0);
}

bool ParameterReader::boolean(const std::string& name, bool fallback) {
  read_.push_back(name);
  const auto it = parameters_.find(name);
  if (it == parameters_.end()) return fallback;
  const std::string text = lowercase(trim(it->second));
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw invalid(name, "is not a boolean (True, False, 1 or 0)");
}

std::string ParameterReader::text(const std::string& name, const std::string& fallback) {
  read_.push_back(name);
  const auto it = parameters_.find(name);
  return it == parameters_.end() ? fallback : it->second;
}

std::vector<std::string> ParameterReader::list(const std::string& name,
                                               const std::vector<std::string>& fallback) {
  read_.push_back(name);
  const auto it = parameters_.find(name);
  if (it == parameters_.end()) return fallback;
  std::vector<std::string> items;
  std::string_view rest = it->second;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return items;
}

std::vector<std::string> ParameterReader::regex_list(const std::string& name,
                                                     const std::vector<std::string>& fallback) {
  std::vector<std::string> patterns = list(name, fallback);
  for (const auto& pattern : patterns) {
    try {
      const NameRegex compiled(pattern);
    } catch (const RegexError& error) {
      throw RuleConfigError("rule " + rule_ + ": parameter " + name + ": \"" + pattern +
                            "\" is not a valid regex: " + error.what());
    }
  }
  return patterns;
}

void ParameterReader::finish() const {
  std::vector<std::string> unknown;
  for (const auto& [name, value] : parameters_) {
    if (name == kRuleToInvoke) continue;
    if (std::find(read_.begin(), read_.end(), name) == read_.end()) {
      unknown.push_back("\"" + name + "\"");
    }
  }
  if (unknown.empty()) return;
  std::vector<std::string> known;
  for (const auto& name : read_) {
    if (std::find(known.begin(), known.end(), name) == known.end()) known.push_back(name);
  }
  throw RuleConfigError("rule " + rule_ + ": unknown parameter" +
                        (unknown.size() > 1 ? "s " : " ") + join(unknown) +
                        " (known: " + (known.empty() ? "none" : join(known)) + ")");
}

// --- RuleRegistry ----------------------------------------------------------------------------

RuleRegistry& RuleRegistry::builtin() {
  static RuleRegistry registry = [] {
    RuleRegistry built;
    // In the order of SageMaker's list of built-in rules.
    built.add(dead_relu_spec());
    built.add(exploding_tensor_spec());
    built.add(poor_weight_initialization_spec());
    built.add(saturated_activation_spec());
    built.add(vanishing_gradient_spec());
    built.add(weight_update_ratio_spec());
    built.add(all_zero_spec());
    built.add(class_imbalance_spec());
    built.add(loss_not_decreasing_spec());
    built.add(overfit_spec());
    built.add(overtraining_spec());
    built.add(similar_across_runs_spec());
    built.add(stalled_training_rule_spec());
    built.add(tensor_variance_spec());
    built.add(unchanged_tensor_spec());
    built.add(check_input_images_spec());
    built.add(nlp_sequence_ratio_spec());
    built.add(confusion_spec());
    built.add(feature_importance_overweight_spec());
    built.add(tree_depth_spec());
    // SageMaker's profiler rules on step times (smdebug trials and series formats alike).
    built.add(step_outlier_spec());
    built.add(max_initialization_time_spec());
    // Rules over series of scalars (TensorBoard logdirs, smdebug losses), rulestream's own.
    built.add(non_finite_spec());
    built.add(loss_spike_spec());
    built.add(grad_norm_spike_spec());
    // The judgement for series (rules/default_rules.hpp runs them on logdirs by default).
    built.add(divergence_spec());
    built.add(gradient_explosion_spec());
    built.add(gradient_vanishing_spec());
    built.add(overfitting_trend_spec());
    built.add(plateau_spec());
    return built;
  }();
  return registry;
}

void RuleRegistry::add(RuleSpec spec) {
  if (lookup_key(spec.name).empty()) throw std::invalid_argument("a rule needs a name");
  if (!spec.create) throw std::invalid_argument("rule " + spec.name + " has no factory");
  std::vector<std::string> names{spec.name};
  names.insert(names.end(), spec.aliases.begin(), spec.aliases.end());
  for (const auto& name : names) {
    if (const RuleSpec* existing = find(name)) {
      throw std::invalid_argument("rule name \"" + name + "\" is already taken by rule " +
                                  existing->name);
    }
  }
  specs_.push_back(std::move(spec));
}

const RuleSpec* RuleRegistry::find(std::string_view name) const {
  const std::string key = lookup_key(name);
  if (key.empty()) return nullptr;
  for (const auto& spec : specs_) {
    if (lookup_key(spec.name) == key) return &spec;
    for (const auto& alias : spec.aliases) {
      if (lookup_key(alias) == key) return &spec;
    }
  }
  return nullptr;
}

std::vector<const RuleSpec*> RuleRegistry::all() const {
  std::vector<const RuleSpec*> result;
  result.reserve(specs_.size());
  for (const auto& spec : specs_) result.push_back(&spec);
  std::sort(result.begin(), result.end(),
            [](const RuleSpec* a, const RuleSpec* b) { return a->name < b->name; });
  return result;
}

const RuleSpec& RuleRegistry::known(std::string_view name) const {
  const RuleSpec* spec = find(name);
  if (spec == nullptr) {
    std::vector<std::string> known;
    for (const RuleSpec* each : all()) known.push_back(each->name);
    throw RuleConfigError("unknown rule \"" + std::string(name) +
                          "\" (known: " + (known.empty() ? "none" : join(known)) + ")");
  }
  return *spec;
}

std::unique_ptr<Rule> RuleRegistry::create(std::string_view name, const RuleContext& context,
                                           const RuleParameters& parameters) const {
  RuleParameters own = parameters;
  own.erase(std::string(kRuleToInvoke));
  return known(name).create(context, own);
}

std::shared_ptr<SeriesRule> RuleRegistry::create_series(std::string_view name,
                                                        const RuleParameters& parameters) const {
  const RuleSpec& spec = known(name);
  if (!spec.create_series) return nullptr;
  RuleParameters own = parameters;
  own.erase(std::string(kRuleToInvoke));
  return spec.create_series(own);
}

}  // namespace rulestream
