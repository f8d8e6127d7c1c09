#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/real_values.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's NLPSequenceRatio (seed 002). Every tensor matching tensor_regex that is saved
// with its values is a batch of token-id sequences (any shape). At each step, for each token in
// token_values, the rule counts the elements equal to it across the whole batch; it fires when
// that share exceeds the token's threshold in token_thresholds_percent (the lists pair up by
// position): too much padding (EOS) suggests another bucketing, too many unknown tokens another
// vocabulary.
class NlpSequenceRatioRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> tensor_regex{".*embedding0_input_0"};
    std::vector<double> token_values{0.0};
    std::vector<double> token_thresholds_percent{50.0};
  };

  NlpSequenceRatioRule(Trial base_trial, Options options);

  std::string_view name() const override { return "NLPSequenceRatio"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
  TensorSelection selection_;
};

namespace {

// Each item of a comma-separated list parameter as a number, with the reader's error wording.
std::vector<double> numbers(ParameterReader& reader, const std::string& name,
                            const std::vector<double>& fallback) {
  std::vector<std::string> fallback_text;
  for (const double value : fallback) fallback_text.push_back(format_figure(value));
  std::vector<double> parsed;
  for (const std::string& item : reader.list(name, fallback_text)) {
    const RuleParameters single{{name, item}};
    ParameterReader one("NLPSequenceRatio", single);
    try {
      parsed.push_back(one.number(name, 0.0));
    } catch (const RuleConfigError&) {
      throw reader.invalid(name, "is not a comma-separated list of numbers (\"" + item + "\")");
    }
  }
  if (parsed.empty()) throw reader.invalid(name, "names no value");
  return parsed;
}

}  // namespace

NlpSequenceRatioRule::NlpSequenceRatioRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_{.regexes = options_.tensor_regex} {}

RuleSpec nlp_sequence_ratio_spec() {
  using Options = NlpSequenceRatioRule::Options;
  RuleSpec spec;
  spec.name = "NLPSequenceRatio";
  spec.aliases = {"nlp_sequence_ratio"};
  spec.description = "token sequences where a token (padding, unknown) takes too large a share";
  spec.parameters = {
      {"tensor_regex", "regex list", ".*embedding0_input_0",
       "regexes of the token-id input tensors"},
      {"token_values", "list", "0", "token ids to count, comma-separated (\"3, 0\")"},
      {"token_thresholds_percent", "list", "50",
       "fires when a token's share of the batch exceeds its percentage (one per token value)"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("NLPSequenceRatio", parameters);
    Options options;
    options.tensor_regex = reader.regex_list("tensor_regex", options.tensor_regex);
    options.token_values = numbers(reader, "token_values", options.token_values);
    options.token_thresholds_percent =
        numbers(reader, "token_thresholds_percent", options.token_thresholds_percent);
    if (options.token_thresholds_percent.size() != options.token_values.size()) {
      throw reader.invalid("token_thresholds_percent",
                           "has " + std::to_string(options.token_thresholds_percent.size()) +
                               " thresholds for " + std::to_string(options.token_values.size()) +
                               " token_values: give one per token");
    }
    for (const double threshold : options.token_thresholds_percent) {
      if (threshold < 0.0 || threshold > 100.0) {
        throw reader.invalid("token_thresholds_percent", "is not a list of percentages (0-100)");
      }
    }
    reader.finish();
    return std::unique_ptr<Rule>(new NlpSequenceRatioRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool NlpSequenceRatioRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  std::string first_detail;
  for (const TensorRef& ref : selection_.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    TensorValue value;
    try {
      value = trial.tensor(ref).value(step);
    } catch (const TensorUnavailableForStep&) {
      continue;  // saved only as reductions at this step: no tokens to count
    }
    const auto tokens = real_values(value);
    if (!tokens || tokens->empty()) continue;
    bool reported = false;
    for (std::size_t t = 0; t < options_.token_values.size(); ++t) {
      const double token = options_.token_values[t];
      std::int64_t count = 0;
      for (const double x : *tokens) count += x == token ? 1 : 0;
      const double percent =
          static_cast<double>(count) * 100.0 / static_cast<double>(tokens->size());
      if (percent <= options_.token_thresholds_percent[t]) continue;
      if (!reported) {
        if (finding.tensors.size() == kMaxReportedTensors) break;
        finding.tensors.push_back(name);
        reported = true;
      }
      const std::string figure = "token_" + format_figure(token) + "_percent";
      finding.figures.push_back({figure, percent, name});
      finding.figures.push_back(
          {figure + "_threshold", options_.token_thresholds_percent[t], std::nullopt});
      if (first_detail.empty()) {
        first_detail = " token " + format_figure(token) + " is " + format_figure(percent) + "% (" +
                       std::to_string(count) + " of " + std::to_string(tokens->size()) +
                       " tokens) > threshold " +
                       format_figure(options_.token_thresholds_percent[t]) + "%";
      }
    }
  }
  if (finding.tensors.empty()) return false;

  finding.message = finding.tensors.front() + first_detail + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
