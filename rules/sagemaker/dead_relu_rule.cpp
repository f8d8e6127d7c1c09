#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/unit_activity.hpp"

namespace rulestream {

// SageMaker's DeadRelu (seed 002). At each step, for each ReLU output tensor (tensor_regex)
// saved with its values: a ReLU unit (one position of the tensor apart from the batch axis,
// the first) is active for a sample when its output is > 0, and dead when it is active for less
// than threshold_inactivity percent of the batch's samples. The rule fires when more than
// threshold_layer percent of a layer's units are dead (rules/support/unit_activity.hpp).
class DeadReluRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> tensor_regex{".*relu_output"};
    double threshold_inactivity = 1.0;  // percent of samples
    double threshold_layer = 50.0;      // percent of units
  };

  DeadReluRule(Trial base_trial, Options options);

  std::string_view name() const override { return "DeadRelu"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
  TensorSelection selection_;
};

DeadReluRule::DeadReluRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_{.regexes = options_.tensor_regex} {}

RuleSpec dead_relu_spec() {
  using Options = DeadReluRule::Options;
  RuleSpec spec;
  spec.name = "DeadRelu";
  spec.aliases = {"dead_relu"};
  spec.description = "layers where too many ReLUs stopped firing (output > 0) for the batch";
  spec.parameters = {
      {"tensor_regex", "regex list", ".*relu_output", "regexes of the ReLU output tensors"},
      {"threshold_inactivity", "float", "1.0",
       "a ReLU active (> 0) for less than this percentage of the batch's samples is dead"},
      {"threshold_layer", "float", "50.0",
       "fires when more than this percentage of a layer's ReLUs are dead"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("DeadRelu", parameters);
    Options options;
    options.tensor_regex = reader.regex_list("tensor_regex", options.tensor_regex);
    options.threshold_inactivity =
        reader.percentage("threshold_inactivity", options.threshold_inactivity);
    options.threshold_layer = reader.percentage("threshold_layer", options.threshold_layer);
    reader.finish();
    return std::unique_ptr<Rule>(new DeadReluRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool DeadReluRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  // A ReLU is active for a sample when its output is above 0.
  const auto positive = [](const std::string&) {
    return std::optional(std::pair(0.0, std::numeric_limits<double>::infinity()));
  };
  const std::vector<InactiveLayer> layers =
      find_inactive_layers(trial, step, selection_.names(trial, step), positive,
                           options_.threshold_inactivity, options_.threshold_layer);
  if (layers.empty()) return false;

  Finding finding;
  for (const InactiveLayer& layer : layers) {
    finding.tensors.push_back(layer.tensor);
    finding.figures.push_back({"dead_percent", layer.activity.inactive_percent(), layer.tensor});
  }
  finding.figures.push_back({"threshold_layer", options_.threshold_layer, std::nullopt});
  finding.figures.push_back({"threshold_inactivity", options_.threshold_inactivity, std::nullopt});
  const UnitActivity& first = layers.front().activity;
  finding.message = layers.front().tensor + " has " + format_figure(first.inactive_percent()) +
                    "% dead ReLUs (" + std::to_string(first.inactive_units) + " of " +
                    std::to_string(first.units) + " ReLUs active for less than " +
                    format_figure(options_.threshold_inactivity) + "% of " +
                    std::to_string(first.samples) + " samples) > threshold_layer " +
                    format_figure(options_.threshold_layer) + "%" + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
