#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/unit_activity.hpp"

namespace rulestream {

// SageMaker's SaturatedActivation (seed 002). At each step, for each selected activation input
// tensor saved with its values: the activation is tanh when the tensor's name contains "tanh",
// else sigmoid when it contains "sigmoid" (any case); other tensors are skipped. A unit (one
// position apart from the batch axis, the first) is active for a sample when its input lies
// strictly between the function's min and max thresholds, and saturated when it is active for
// less than threshold_inactivity percent of the batch's samples. The rule fires when more than
// threshold_layer percent of a layer's units are saturated (rules/support/unit_activity.hpp).
class SaturatedActivationRule final : public Rule {
 public:
  struct Options {
    // collection_names, tensor_regex
    TensorSelection selection{.regexes = {".*tanh_input|.*sigmoid_input"}};
    double threshold_tanh_min = -9.4999;
    double threshold_tanh_max = 9.4999;
    double threshold_sigmoid_min = -23.0;
    double threshold_sigmoid_max = 16.99999;
    double threshold_inactivity = 1.0;  // percent of samples
    double threshold_layer = 50.0;      // percent of units
  };

  SaturatedActivationRule(Trial base_trial, Options options);

  std::string_view name() const override { return "SaturatedActivation"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
};

namespace {

struct ActivationRange {
  std::string_view function;
  double min;
  double max;
};

bool contains_ignoring_case(std::string_view text, std::string_view part) {
  return std::search(text.begin(), text.end(), part.begin(), part.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

std::optional<ActivationRange> range_for(const std::string& tensor,
                                         const SaturatedActivationRule::Options& options) {
  if (contains_ignoring_case(tensor, "tanh")) {
    return ActivationRange{"tanh", options.threshold_tanh_min, options.threshold_tanh_max};
  }
  if (contains_ignoring_case(tensor, "sigmoid")) {
    return ActivationRange{"sigmoid", options.threshold_sigmoid_min, options.threshold_sigmoid_max};
  }
  return std::nullopt;
}

void check_range(const ParameterReader& reader, const std::string& min_name, double min,
                 const std::string& max_name, double max) {
  if (min >= max) throw reader.invalid(max_name, "must be greater than " + min_name);
}

}  // namespace

SaturatedActivationRule::SaturatedActivationRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

RuleSpec saturated_activation_spec() {
  using Options = SaturatedActivationRule::Options;
  RuleSpec spec;
  spec.name = "SaturatedActivation";
  spec.aliases = {"saturated_activation"};
  spec.description = "tanh and sigmoid layers whose inputs sit at the function's flat ends";
  const TensorSelection defaults = Options().selection;
  spec.parameters = {
      TensorSelection::collections_parameter("collections of activation input tensors", defaults),
      TensorSelection::regexes_parameter(
          "regexes of activation input tensors (with collections: union); the name says tanh or "
          "sigmoid",
          defaults),
      {"threshold_tanh_min", "float", "-9.4999", "a tanh input at or below this is saturated"},
      {"threshold_tanh_max", "float", "9.4999", "a tanh input at or above this is saturated"},
      {"threshold_sigmoid_min", "float", "-23", "a sigmoid input at or below this is saturated"},
      {"threshold_sigmoid_max", "float", "16.99999",
       "a sigmoid input at or above this is saturated"},
      {"threshold_inactivity", "float", "1.0",
       "a unit active for less than this percentage of the batch's samples is saturated"},
      {"threshold_layer", "float", "50.0",
       "fires when more than this percentage of a layer's units are saturated"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("SaturatedActivation", parameters);
    Options options;
    options.selection = TensorSelection::read(reader, options.selection);
    options.threshold_tanh_min = reader.number("threshold_tanh_min", options.threshold_tanh_min);
    options.threshold_tanh_max = reader.number("threshold_tanh_max", options.threshold_tanh_max);
    check_range(reader, "threshold_tanh_min", options.threshold_tanh_min, "threshold_tanh_max",
                options.threshold_tanh_max);
    options.threshold_sigmoid_min =
        reader.number("threshold_sigmoid_min", options.threshold_sigmoid_min);
    options.threshold_sigmoid_max =
        reader.number("threshold_sigmoid_max", options.threshold_sigmoid_max);
    check_range(reader, "threshold_sigmoid_min", options.threshold_sigmoid_min,
                "threshold_sigmoid_max", options.threshold_sigmoid_max);
    options.threshold_inactivity =
        reader.percentage("threshold_inactivity", options.threshold_inactivity);
    options.threshold_layer = reader.percentage("threshold_layer", options.threshold_layer);
    reader.finish();
    return std::unique_ptr<Rule>(
        new SaturatedActivationRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool SaturatedActivationRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  // A unit is active for a sample when its input lies strictly between its function's extremes.
  const auto inside_extremes = [this](const std::string& tensor) {
    const auto range = range_for(tensor, options_);
    return range ? std::optional(std::pair(range->min, range->max)) : std::nullopt;
  };
  const std::vector<InactiveLayer> layers =
      find_inactive_layers(trial, step, options_.selection.names(trial, step), inside_extremes,
                           options_.threshold_inactivity, options_.threshold_layer);
  if (layers.empty()) return false;

  Finding finding;
  for (const InactiveLayer& layer : layers) {
    finding.tensors.push_back(layer.tensor);
    finding.figures.push_back(
        {"saturated_percent", layer.activity.inactive_percent(), layer.tensor});
  }
  finding.figures.push_back({"threshold_layer", options_.threshold_layer, std::nullopt});
  finding.figures.push_back({"threshold_inactivity", options_.threshold_inactivity, std::nullopt});
  const UnitActivity& first = layers.front().activity;
  const ActivationRange range = *range_for(layers.front().tensor, options_);
  finding.message = layers.front().tensor + " is " + format_figure(first.inactive_percent()) +
                    "% saturated (" + std::to_string(first.inactive_units) + " of " +
                    std::to_string(first.units) + " " + std::string(range.function) +
                    " units with inputs outside (" + format_figure(range.min) + ", " +
                    format_figure(range.max) + ") for more than " +
                    format_figure(100.0 - options_.threshold_inactivity) + "% of " +
                    std::to_string(first.samples) + " samples) > threshold_layer " +
                    format_figure(options_.threshold_layer) + "%" + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
