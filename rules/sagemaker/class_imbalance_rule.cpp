#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/class_ids.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's ClassImbalance (seed 002). At each step that saved both a labels tensor (names
// matching labels_regex) and a predictions tensor (predictions_regex), the rule adds that
// step's samples to running counts since the start of the job: samples per true class, and
// mispredicted samples per true class (prediction != label). Labels are class ids; predictions
// are class ids too, or with `argmax` one score per class (shape samples x classes). Several
// matching tensors are concatenated in name order. Once at least `samples` labels have been
// counted, the rule fires at a step when
//   largest class count / smallest class count > threshold_imbalance, or
//   mispredicted / count of some class > threshold_misprediction.
// Classes are those that occur among the labels. Steps without both tensors are skipped.
class ClassImbalanceRule final : public Rule {
 public:
  struct Options {
    double threshold_imbalance = 10.0;
    double threshold_misprediction = 0.7;
    std::int64_t samples = 500;
    bool argmax = false;
    std::vector<std::string> labels_regex{".*labels"};
    std::vector<std::string> predictions_regex{".*predictions"};
  };

  ClassImbalanceRule(Trial base_trial, Options options);

  std::string_view name() const override { return "ClassImbalance"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  struct ClassCounts {
    std::int64_t samples = 0;
    std::int64_t mispredicted = 0;
  };

  Options options_;
  TensorSelection labels_;
  TensorSelection predictions_;
  std::map<std::int64_t, ClassCounts> classes_;  // true class -> counts so far
  std::int64_t samples_seen_ = 0;
};

ClassImbalanceRule::ClassImbalanceRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      labels_{.regexes = options_.labels_regex},
      predictions_{.regexes = options_.predictions_regex} {}

RuleSpec class_imbalance_spec() {
  using Options = ClassImbalanceRule::Options;
  RuleSpec spec;
  spec.name = "ClassImbalance";
  spec.aliases = {"class_imbalance"};
  spec.description = "classes sampled far apart in number, or a class mostly mispredicted";
  spec.parameters = {
      {"threshold_imbalance", "float", "10",
       "fires when the largest class has more than this many times the smallest's samples"},
      {"threshold_misprediction", "float", "0.7",
       "fires when a class's fraction of mispredicted samples is above this"},
      {"samples", "int", "500", "labels counted (over all steps) before the rule judges"},
      {"argmax", "bool", "False",
       "predictions hold one score per class (samples x classes): take the largest"},
      {"labels_regex", "regex list", ".*labels", "regexes of the labels tensors"},
      {"predictions_regex", "regex list", ".*predictions", "regexes of the predictions tensors"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("ClassImbalance", parameters);
    Options options;
    options.threshold_imbalance = reader.number("threshold_imbalance", options.threshold_imbalance);
    if (options.threshold_imbalance < 1.0) {
      throw reader.invalid("threshold_imbalance", "must be at least 1 (a ratio of counts)");
    }
    options.threshold_misprediction =
        reader.number("threshold_misprediction", options.threshold_misprediction);
    if (options.threshold_misprediction < 0.0 || options.threshold_misprediction > 1.0) {
      throw reader.invalid("threshold_misprediction", "is not a fraction between 0 and 1");
    }
    options.samples = reader.integer("samples", options.samples);
    if (options.samples < 1) throw reader.invalid("samples", "must be at least 1");
    options.argmax = reader.boolean("argmax", options.argmax);
    options.labels_regex = reader.regex_list("labels_regex", options.labels_regex);
    if (options.labels_regex.empty()) throw reader.invalid("labels_regex", "names no tensor");
    options.predictions_regex = reader.regex_list("predictions_regex", options.predictions_regex);
    if (options.predictions_regex.empty()) {
      throw reader.invalid("predictions_regex", "names no tensor");
    }
    reader.finish();
    return std::unique_ptr<Rule>(new ClassImbalanceRule(context.base_trial, std::move(options)));
  };
  return spec;
}

RequiredTensors ClassImbalanceRule::required_tensors() const {
  RequiredTensors required{.regexes = options_.labels_regex};
  required.regexes.insert(required.regexes.end(), options_.predictions_regex.begin(),
                          options_.predictions_regex.end());
  return required;
}

bool ClassImbalanceRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const LabeledPredictions seen =
      labeled_predictions(trial, labels_.names(trial, step), predictions_.names(trial, step), step,
                          options_.argmax ? ClassEncoding::Scores : ClassEncoding::Ids);
  for (std::size_t i = 0; i < seen.labels.size(); ++i) {
    ClassCounts& counts = classes_[seen.labels[i]];
    ++counts.samples;
    if (seen.predictions[i] != seen.labels[i]) ++counts.mispredicted;
  }
  samples_seen_ += static_cast<std::int64_t>(seen.labels.size());
  if (samples_seen_ < options_.samples || classes_.empty()) return false;

  // The largest and smallest classes (the lowest class id on ties), and the class with the
  // largest share of mispredictions.
  auto largest = classes_.begin();
  auto smallest = classes_.begin();
  auto worst = classes_.begin();
  const auto mispredicted_share = [](const ClassCounts& counts) {
    return static_cast<double>(counts.mispredicted) / static_cast<double>(counts.samples);
  };
  for (auto it = classes_.begin(); it != classes_.end(); ++it) {
    if (it->second.samples > largest->second.samples) largest = it;
    if (it->second.samples < smallest->second.samples) smallest = it;
    if (mispredicted_share(it->second) > mispredicted_share(worst->second)) worst = it;
  }
  const double imbalance =
      static_cast<double>(largest->second.samples) / static_cast<double>(smallest->second.samples);
  const double misprediction = mispredicted_share(worst->second);
  const bool imbalanced = imbalance > options_.threshold_imbalance;
  const bool mispredicted = misprediction > options_.threshold_misprediction;
  if (!imbalanced && !mispredicted) return false;

  Finding finding;
  finding.tensors = seen.tensors;
  const auto count = [](std::int64_t n) { return static_cast<double>(n); };
  if (imbalanced) {
    finding.figures.push_back({"imbalance", imbalance, std::nullopt});
    finding.figures.push_back({"largest_class", count(largest->first), std::nullopt});
    finding.figures.push_back({"largest_class_samples", count(largest->second.samples)});
    finding.figures.push_back({"smallest_class", count(smallest->first), std::nullopt});
    finding.figures.push_back({"smallest_class_samples", count(smallest->second.samples)});
    finding.figures.push_back({"threshold_imbalance", options_.threshold_imbalance});
    finding.message = "class " + std::to_string(largest->first) + " has " +
                      std::to_string(largest->second.samples) + " samples, class " +
                      std::to_string(smallest->first) + " only " +
                      std::to_string(smallest->second.samples) + ": imbalance " +
                      format_figure(imbalance) + " > threshold " +
                      format_figure(options_.threshold_imbalance);
  }
  if (mispredicted) {
    finding.figures.push_back({"misprediction", misprediction, std::nullopt});
    finding.figures.push_back({"mispredicted_class", count(worst->first), std::nullopt});
    finding.figures.push_back({"mispredicted_class_samples", count(worst->second.samples)});
    finding.figures.push_back({"threshold_misprediction", options_.threshold_misprediction});
    finding.message +=
        std::string(finding.message.empty() ? "" : "; ") + "class " + std::to_string(worst->first) +
        " is mispredicted in " + std::to_string(worst->second.mispredicted) + " of " +
        std::to_string(worst->second.samples) + " samples (" + format_figure(misprediction) +
        " > threshold " + format_figure(options_.threshold_misprediction) + ")";
  }
  finding.figures.push_back({"samples_seen", count(samples_seen_), std::nullopt});
  finding.message += " after " + std::to_string(samples_seen_) + " labels";
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
