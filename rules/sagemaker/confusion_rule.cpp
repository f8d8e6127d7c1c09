#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/class_ids.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's Confusion (seed 002). At each step that saved labels and predictions, the rule
// builds that step's confusion matrix C (C[label][prediction] counts samples) of category_no
// classes (when not given: the largest class seen at the step + 1, at least 2) and checks each
// predicted class i that was predicted at least once, over its column:
//   C[i][i] / sum_j C[j][i] >= min_diag         (the share of class-i predictions that are right)
//   C[j][i] / sum_j C[j][i] <= max_off_diag     (for every j != i: the share that is class j)
// and fires when any check fails. The document writes the diagonal's denominator as
// sum_j C[j][j]; read literally every class of a balanced 10-class problem would fail, so the
// column sum of its off-diagonal formula is used for both (see docs/rules.md).
// Labels: the tensor named `labels` when the job saved one, else the tensors of
// labels_collection; predictions likewise. Predictions of two or more dimensions are class
// scores (XGBoost's multi:softprob): the class is their argmax.
class ConfusionRule final : public Rule {
 public:
  struct Options {
    std::optional<std::int64_t> category_no;
    std::string labels = "labels";
    std::string predictions = "predictions";
    std::string labels_collection = "labels";
    std::string predictions_collection = "predictions";
    double min_diag = 0.9;
    double max_off_diag = 0.1;
  };

  ConfusionRule(Trial base_trial, Options options);

  std::string_view name() const override { return "Confusion"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

namespace {

// The tensor the user named when the job saved it, else the collection's tensors at the step.
std::vector<std::string> chosen_tensors(const Trial& trial, const std::string& tensor,
                                        const std::string& collection, std::int64_t step) {
  if (trial.has_tensor(tensor)) return {tensor};
  return TensorSelection{.collections = {collection}}.names(trial, step);
}

std::string ratio_text(std::int64_t part, std::int64_t whole) {
  return std::to_string(part) + "/" + std::to_string(whole);
}

}  // namespace

ConfusionRule::ConfusionRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

RuleSpec confusion_spec() {
  using Options = ConfusionRule::Options;
  RuleSpec spec;
  spec.name = "Confusion";
  spec.aliases = {"confusion"};
  spec.description = "a classifier's confusion matrix with too little on its diagonal";
  spec.parameters = {
      {"category_no", "int", "None", "number of classes (None: inferred at each step)"},
      {"labels", "string", "labels", "name of the tensor of true labels"},
      {"predictions", "string", "predictions", "name of the tensor of predicted labels"},
      {"labels_collection", "string", "labels",
       "collection whose tensors are the labels when the labels tensor was not saved"},
      {"predictions_collection", "string", "predictions",
       "collection whose tensors are the predictions when the predictions tensor was not saved"},
      {"min_diag", "float", "0.9",
       "fires when the right share of a predicted class's samples is below this"},
      {"max_off_diag", "float", "0.1",
       "fires when one wrong class's share of a predicted class's samples is above this"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("Confusion", parameters);
    Options options;
    options.category_no = reader.optional_integer("category_no");
    if (options.category_no && *options.category_no < 2) {
      throw reader.invalid("category_no", "must be at least 2");
    }
    options.labels = reader.text("labels", options.labels);
    options.predictions = reader.text("predictions", options.predictions);
    options.labels_collection = reader.text("labels_collection", options.labels_collection);
    options.predictions_collection =
        reader.text("predictions_collection", options.predictions_collection);
    options.min_diag = reader.number("min_diag", options.min_diag);
    if (options.min_diag < 0.0 || options.min_diag > 1.0) {
      throw reader.invalid("min_diag", "is not a ratio between 0 and 1");
    }
    options.max_off_diag = reader.number("max_off_diag", options.max_off_diag);
    if (options.max_off_diag < 0.0 || options.max_off_diag > 1.0) {
      throw reader.invalid("max_off_diag", "is not a ratio between 0 and 1");
    }
    reader.finish();
    return std::unique_ptr<Rule>(new ConfusionRule(context.base_trial, std::move(options)));
  };
  return spec;
}

RequiredTensors ConfusionRule::required_tensors() const {
  return {.names = {options_.labels, options_.predictions},
          .collections = {options_.labels_collection, options_.predictions_collection}};
}

bool ConfusionRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const LabeledPredictions seen = labeled_predictions(
      trial, chosen_tensors(trial, options_.labels, options_.labels_collection, step),
      chosen_tensors(trial, options_.predictions, options_.predictions_collection, step), step,
      ClassEncoding::ByShape);
  if (seen.labels.empty()) return false;

  std::int64_t categories = 2;
  if (options_.category_no) {
    categories = *options_.category_no;
    for (const auto* ids : {&seen.labels, &seen.predictions}) {
      for (const std::int64_t id : *ids) {
        if (id >= categories) {
          throw RulestreamError("Confusion at step " + std::to_string(step) + ": class " +
                                std::to_string(id) + " in " +
                                (ids == &seen.labels ? "labels" : "predictions") +
                                " is not below category_no " + std::to_string(categories));
        }
      }
    }
  } else {
    for (const auto* ids : {&seen.labels, &seen.predictions}) {
      categories = std::max(categories, *std::max_element(ids->begin(), ids->end()) + 1);
    }
  }

  const auto k = static_cast<std::size_t>(categories);
  std::vector<std::int64_t> confusion(k * k, 0);  // [label * k + prediction]
  for (std::size_t i = 0; i < seen.labels.size(); ++i) {
    ++confusion[static_cast<std::size_t>(seen.labels[i]) * k +
                static_cast<std::size_t>(seen.predictions[i])];
  }

  // The worst diagonal ratio below min_diag, and the worst off-diagonal above max_off_diag.
  struct Cell {
    std::size_t label = 0, prediction = 0;
    std::int64_t count = 0, column = 0;
    double ratio = 0.0;
  };
  std::optional<Cell> low_diagonal;
  std::optional<Cell> high_off_diagonal;
  for (std::size_t predicted = 0; predicted < k; ++predicted) {
    std::int64_t column = 0;
    for (std::size_t label = 0; label < k; ++label) column += confusion[label * k + predicted];
    if (column == 0) continue;
    for (std::size_t label = 0; label < k; ++label) {
      const std::int64_t count = confusion[label * k + predicted];
      const Cell cell{label, predicted, count, column,
                      static_cast<double>(count) / static_cast<double>(column)};
      if (label == predicted) {
        if (cell.ratio < options_.min_diag && (!low_diagonal || cell.ratio < low_diagonal->ratio)) {
          low_diagonal = cell;
        }
      } else if (cell.ratio > options_.max_off_diag &&
                 (!high_off_diagonal || cell.ratio > high_off_diagonal->ratio)) {
        high_off_diagonal = cell;
      }
    }
  }
  if (!low_diagonal && !high_off_diagonal) return false;

  Finding finding;
  finding.tensors = seen.tensors;
  if (low_diagonal) {
    finding.figures.push_back({"diag_ratio", low_diagonal->ratio, std::nullopt});
    finding.figures.push_back({"class", static_cast<double>(low_diagonal->prediction)});
    finding.figures.push_back({"min_diag", options_.min_diag});
    finding.message = "of the samples predicted as class " +
                      std::to_string(low_diagonal->prediction) + " only " +
                      ratio_text(low_diagonal->count, low_diagonal->column) + " (" +
                      format_figure(low_diagonal->ratio) + ") are class " +
                      std::to_string(low_diagonal->prediction) + " < min_diag " +
                      format_figure(options_.min_diag);
  }
  if (high_off_diagonal) {
    finding.figures.push_back({"off_diag_ratio", high_off_diagonal->ratio, std::nullopt});
    finding.figures.push_back({"label", static_cast<double>(high_off_diagonal->label)});
    finding.figures.push_back({"prediction", static_cast<double>(high_off_diagonal->prediction)});
    finding.figures.push_back({"max_off_diag", options_.max_off_diag});
    finding.message += std::string(finding.message.empty() ? "" : "; ") +
                       ratio_text(high_off_diagonal->count, high_off_diagonal->column) + " (" +
                       format_figure(high_off_diagonal->ratio) +
                       ") of the samples predicted as class " +
                       std::to_string(high_off_diagonal->prediction) + " are class " +
                       std::to_string(high_off_diagonal->label) + " > max_off_diag " +
                       format_figure(options_.max_off_diag);
  }
  finding.figures.push_back({"samples", static_cast<double>(seen.labels.size())});
  finding.figures.push_back({"category_no", static_cast<double>(categories)});
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
