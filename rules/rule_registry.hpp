#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/rule.hpp"

namespace rulestream {

// Rule parameters are strings, as in smdebug and SageMaker's RuleParameters.
using RuleParameters = std::map<std::string, std::string>;

// A bad rule configuration: unknown rule, unknown parameter, or a value that does not parse.
// The message names the rule, the parameter and the value.
class RuleConfigError : public RulestreamError {
 public:
  using RulestreamError::RulestreamError;
};

struct ParameterSpec {
  std::string name;
  std::string type;           // "float", "int", "bool", "string", "list", "regex list"
  std::string default_value;  // as a user would write it; "" when none
  std::string description;
};

// The trials a rule is built on.
struct RuleContext {
  Trial base_trial;
  std::vector<Trial> other_trials;
};

class SeriesRule;  // rules/series_rule.hpp

struct RuleSpec {
  std::string name;                  // "VanishingGradient"
  std::vector<std::string> aliases;  // "vanishing_gradient", ...
  std::string description;
  std::vector<ParameterSpec> parameters;
  std::function<std::unique_ptr<Rule>(const RuleContext&, const RuleParameters&)> create;
  // Rules over series of scalars (rules/series_rule.hpp) also build as a SeriesRule, which is
  // what runs on a TensorBoard logdir; empty for rules that run on smdebug trials only.
  std::function<std::shared_ptr<SeriesRule>(const RuleParameters&)> create_series;
};

// Reads string parameters with a clear error for bad values. Construct it in a rule's factory,
// read every parameter, then call finish() to reject parameters the rule does not know.
class ParameterReader {
 public:
  ParameterReader(std::string rule, const RuleParameters& parameters);
  double number(const std::string& name, double fallback);
  // A number between 0 and 100.
  double percentage(const std::string& name, double fallback);
  std::int64_t integer(const std::string& name, std::int64_t fallback);
  // Parameters whose documented default is None: nullopt when absent, empty or "None".
  std::optional<double> optional_number(const std::string& name);
  std::optional<std::int64_t> optional_integer(const std::string& name);
  bool boolean(const std::string& name, bool fallback);  // "True"/"False" (any case), 1/0
  std::string text(const std::string& name, const std::string& fallback);
  std::vector<std::string> list(const std::string& name,
                                const std::vector<std::string>& fallback);  // comma-separated
  // A list of regexes in Python's syntax (NameRegex), each checked to compile.
  std::vector<std::string> regex_list(const std::string& name,
                                      const std::vector<std::string>& fallback);
  void finish() const;  // throws RuleConfigError for parameters nobody read

  // The error for a value that parsed but is out of range, in the reader's wording:
  // `rule LossNotDecreasing: parameter num_steps: "0" <problem>`. The parameter must be set.
  RuleConfigError invalid(const std::string& name, const std::string& problem) const;

 private:
  bool is_none(const std::string& name) const;

  std::string rule_;
  const RuleParameters& parameters_;
  std::vector<std::string> read_;
};

// Name -> factory for built-in and user rules.
class RuleRegistry {
 public:
  // The built-in rules, registered once.
  static RuleRegistry& builtin();

  void add(RuleSpec spec);  // throws std::invalid_argument on a duplicate name
  // By name or alias, case-insensitive, "VanishingGradient" == "vanishing_gradient".
  const RuleSpec* find(std::string_view name) const;
  std::vector<const RuleSpec*> all() const;  // sorted by name

  // Builds a rule; RuleConfigError for an unknown rule or a bad parameter. The parameter
  // "rule_to_invoke" is ignored here (it chose the rule).
  std::unique_ptr<Rule> create(std::string_view name, const RuleContext& context,
                               const RuleParameters& parameters) const;
  // The rule as a series rule, for TensorBoard data; nullptr for a rule that has no series
  // form (RuleConfigError for an unknown rule or a bad parameter, as create).
  std::shared_ptr<SeriesRule> create_series(std::string_view name,
                                            const RuleParameters& parameters) const;

 private:
  const RuleSpec& known(std::string_view name) const;  // RuleConfigError naming the known ones

  std::vector<RuleSpec> specs_;
};

}  // namespace rulestream
