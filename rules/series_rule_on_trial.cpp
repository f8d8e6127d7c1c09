#include "rules/series_rule_on_trial.hpp"

#include <cmath>
#include <set>

#include "core/model/exceptions.hpp"
#include "rules/support/saved_scalar.hpp"
#include "rules/support/tensor_selection.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

constexpr const char* kGradientNorm = "gradient_norm";

// sqrt(sum of squared L2 norms) of the gradients saved at `step`; nullopt when none was.
std::optional<double> gradient_norm(const Trial& trial, std::int64_t step) {
  const TensorSelection gradients{.collections = {"gradients"}, .regexes = {}};
  double squares = 0.0;
  bool any = false;
  for (const TensorRef& ref : gradients.tensor_refs(trial, step)) {
    try {
      const double norm = trial.tensor(ref).reduction_value(step, Reduction::L2).as_double();
      squares += norm * norm;
      any = true;
    } catch (const TensorUnavailableForStep&) {
    }
  }
  if (!any) return std::nullopt;
  return std::sqrt(squares);
}

}  // namespace

SeriesRuleOnTrial::SeriesRuleOnTrial(Trial base_trial, std::shared_ptr<const SeriesRule> rule)
    : Rule(std::move(base_trial)), rule_(std::move(rule)) {
  SeriesInfo norm;
  norm.tag = kGradientNorm;
  norm.role = SeriesRole::GradientNorm;
  watches_gradient_norm_ = rule_->watches(norm);
}

RequiredTensors SeriesRuleOnTrial::required_tensors() const {
  RequiredTensors required;
  required.collections = {"losses", "scalars"};
  if (watches_gradient_norm_) required.collections.push_back("gradients");
  required.regexes = rule_->tag_regexes();
  return required;
}

bool SeriesRuleOnTrial::feed(const SeriesInfo& info, std::int64_t step, double value,
                             Finding& finding) {
  auto& state = states_[{info.tag, info.mode}];
  if (!state) state = rule_->start(info);
  Finding found;
  const bool met = state->add(step, value, found);
  // Named as a finding on the series names it (SeriesInfo::display_name), so that its incident
  // is the one resolved.
  if (state->take_cleared()) cleared_.push_back(info.display_name());
  if (!met) return false;
  if (finding.message.empty()) {
    finding = std::move(found);
  } else {  // several series met the condition at this step: one finding names them all
    finding.tensors.insert(finding.tensors.end(), found.tensors.begin(), found.tensors.end());
    finding.figures.insert(finding.figures.end(), found.figures.begin(), found.figures.end());
  }
  return true;
}

namespace {

// What the rule watches at one step: each series' value, in the order they are fed (the
// candidates' names in order, then the gradient norm).
struct SeriesReading final : StepReading {
  std::vector<std::pair<SeriesInfo, double>> values;
};

}  // namespace

std::unique_ptr<StepReading> SeriesRuleOnTrial::read_step(const Trial& trial,
                                                          std::int64_t step) const {
  auto reading = std::make_unique<SeriesReading>();
  const Mode mode = trial.mode(step).value_or(Mode::Global);
  const std::set<std::string> losses = [&] {
    const auto names = trial.tensor_names({.step = step, .collection = "losses"});
    return std::set<std::string>(names.begin(), names.end());
  }();
  TensorSelection candidates{.collections = {"losses", "scalars"}, .regexes = {}};
  std::set<std::string> names;
  for (const auto& ref : candidates.tensor_refs(trial, step)) names.insert(ref.name());
  if (const auto patterns = rule_->tag_regexes(); !patterns.empty()) {
    for (const auto& name : trial.tensor_names({.step = step, .regex = patterns})) {
      names.insert(name);
    }
  }
  for (const auto& name : names) {
    SeriesInfo info;
    info.tag = name;
    info.mode = mode;
    info.role = losses.contains(name) ? SeriesRole::Loss : SeriesRole::Other;
    if (!rule_->watches(info)) continue;
    const auto value = saved_scalar(trial.tensor(name), step, Mode::Global);
    if (!value) continue;
    reading->values.emplace_back(std::move(info), *value);
  }
  if (watches_gradient_norm_) {
    if (const auto norm = gradient_norm(trial, step)) {
      SeriesInfo info;
      info.tag = kGradientNorm;
      info.mode = mode;
      info.role = SeriesRole::GradientNorm;
      reading->values.emplace_back(std::move(info), *norm);
    }
  }
  return reading;
}

bool SeriesRuleOnTrial::invoke_at_step(std::int64_t step) {
  const auto read = reading(step);
  const auto& values = static_cast<const SeriesReading&>(*read).values;
  // A step without what the rule watches was not evaluated: a trial without any ends in Error,
  // never in NoIssuesFound.
  if (values.empty()) throw TensorUnavailableForStep(rule_->looks_for(), step, Mode::Global);
  Finding finding;
  bool met = false;
  for (const auto& [info, value] : values) {
    if (feed(info, step, value, finding)) met = true;
  }
  if (met) report(std::move(finding));
  return met;
}

std::function<std::unique_ptr<Rule>(const RuleContext&, const RuleParameters&)>
series_rule_on_trial(
    std::function<std::shared_ptr<SeriesRule>(const RuleParameters&)> create_series) {
  return [create_series = std::move(create_series)](const RuleContext& context,
                                                    const RuleParameters& parameters) {
    return std::unique_ptr<Rule>(
        new SeriesRuleOnTrial(context.base_trial, create_series(parameters)));
  };
}

}  // namespace rulestream
