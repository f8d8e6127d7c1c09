#include "rules/sagemaker/exploding_tensor_rule.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "rules/builtin_rules.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/rule_text.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

// On series of scalars (a TensorBoard logdir): every value that is NaN or, unless only_nan, an
// infinity fires, as the rule fires at every step a tensor holds one. Series: tensor_regex's
// (searched in the tag) and the losses when collection_names names `losses`; every series when
// neither is given (a logdir has no other collections).
class ExplodingTensorSeries final : public SeriesRule {
 public:
  ExplodingTensorSeries(SeriesSelection selection, bool all, bool only_nan)
      : selection_(std::move(selection)), all_(all), only_nan_(only_nan) {}

  std::string_view name() const override { return "ExplodingTensor"; }
  // Scalar series by the selection; histograms by their sum, which a NaN or an infinity among
  // their values makes NaN or infinite (every histogram, or those tensor_regex finds).
  bool watches(const SeriesInfo& series) const override {
    if (series.figure == "sum") {
      SeriesInfo tag = series;
      tag.figure.clear();
      tag.role = SeriesRole::Other;
      return selection_.watches(tag) || all_;
    }
    return selection_.watches(series);
  }
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override { return selection_.describe(); }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    class State final : public SeriesState {
     public:
      State(std::string name, bool only_nan) : name_(std::move(name)), only_nan_(only_nan) {}
      bool add(std::int64_t step, double value, Finding& finding) override {
        if (std::isfinite(value) || (only_nan_ && !std::isnan(value))) return false;
        finding.tensors = {name_};
        finding.figures = {{"value", value, name_}};
        finding.message =
            name_ + " is " + format_figure(value) + " at step " + std::to_string(step);
        return true;
      }

     private:
      std::string name_;
      bool only_nan_;
    };
    return std::make_unique<State>(series.display_name(), only_nan_);
  }

 private:
  SeriesSelection selection_;
  bool all_;  // no collection_names or tensor_regex: every series
  bool only_nan_;
};

}  // namespace

ExplodingTensorRule::ExplodingTensorRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

RuleSpec exploding_tensor_spec() {
  using Options = ExplodingTensorRule::Options;
  RuleSpec spec;
  spec.name = "ExplodingTensor";
  spec.aliases = {"exploding_tensor"};
  spec.description = "tensors holding NaN or infinite values";
  spec.parameters = {TensorSelection::collections_parameter(),
                     TensorSelection::regexes_parameter(),
                     {"only_nan", "bool", "False", "True: fire on NaN only, not on infinities"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("ExplodingTensor", parameters);
    Options options;
    options.selection = TensorSelection::read(reader, options.selection);
    options.only_nan = reader.boolean("only_nan", options.only_nan);
    reader.finish();
    return std::unique_ptr<Rule>(new ExplodingTensorRule(context.base_trial, std::move(options)));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("ExplodingTensor", parameters);
    const TensorSelection selection = TensorSelection::read(reader, {});
    const bool only_nan = reader.boolean("only_nan", false);
    reader.finish();
    const auto& collections = selection.collections;
    const bool losses =
        std::find(collections.begin(), collections.end(), "losses") != collections.end();
    return std::make_shared<ExplodingTensorSeries>(
        selection.selects_all()
            ? SeriesSelection(std::nullopt)
            : SeriesSelection::either(losses ? std::optional(SeriesRole::Loss) : std::nullopt,
                                      compile_name_regexes(selection.regexes)),
        selection.selects_all(), only_nan);
  };
  return spec;
}

bool ExplodingTensorRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  for (const TensorRef& ref : options_.selection.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    const std::optional<ElementCounts> counts = saved_element_counts(trial.tensor(ref), step);
    if (!counts) continue;        // saved only as reductions at this step, or not numbers
    if (!counts->nans) continue;  // integers and bool hold neither NaN nor Inf
    const bool exploded = *counts->nans > 0 || (!options_.only_nan && *counts->infs > 0);
    if (!exploded) continue;
    finding.tensors.push_back(name);
    finding.figures.push_back({"nan_count", static_cast<double>(*counts->nans), name});
    if (!options_.only_nan) {
      finding.figures.push_back({"inf_count", static_cast<double>(*counts->infs), name});
    }
    finding.figures.push_back({"size", static_cast<double>(counts->elements), name});
    if (finding.tensors.size() == kMaxReportedTensors) break;
  }
  if (finding.tensors.empty()) return false;

  const auto figure = [&](std::size_t index) {
    return std::to_string(static_cast<std::int64_t>(finding.figures[index].value));
  };
  finding.message = finding.tensors.front() + " has " + figure(0) + " NaN";
  if (!options_.only_nan) finding.message += " and " + figure(1) + " infinite";
  finding.message +=
      " of " + figure(options_.only_nan ? 1 : 2) + " values" + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
