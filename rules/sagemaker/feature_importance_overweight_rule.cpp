#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/saved_scalar.hpp"
#include "rules/support/tensor_selection.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's FeatureImportanceOverweight (seed 002), for XGBoost. smdebug's XGBoost hook saves
// one scalar per feature and importance type, `feature_importance/<type>/<feature>`, normalised
// so that a type's features sum to 1. At each step, over the selected tensors saved there (one
// per feature), the rule sums the nfeatures largest importances and divides by the sum of all;
// it fires when that share exceeds `threshold`. With nfeatures or fewer features the top ones
// hold everything by definition, so the step is evaluated and quiet.
class FeatureImportanceOverweightRule final : public Rule {
 public:
  struct Options {
    double threshold = 0.8;
    std::int64_t nfeatures = 3;
    std::vector<std::string> tensor_regex{".*feature_importance/weight"};
  };

  FeatureImportanceOverweightRule(Trial base_trial, Options options);

  std::string_view name() const override { return "FeatureImportanceOverweight"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
  TensorSelection selection_;
};

FeatureImportanceOverweightRule::FeatureImportanceOverweightRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_{.regexes = options_.tensor_regex} {}

RuleSpec feature_importance_overweight_spec() {
  using Options = FeatureImportanceOverweightRule::Options;
  RuleSpec spec;
  spec.name = "FeatureImportanceOverweight";
  spec.aliases = {"feature_importance_overweight"};
  spec.description = "a few features holding most of an XGBoost model's feature importance";
  spec.parameters = {
      {"threshold", "float", "0.8",
       "fires when the nfeatures largest importances hold more than this share of the total"},
      {"nfeatures", "int", "3", "how many of the largest feature importances are summed"},
      {"tensor_regex", "regex list", ".*feature_importance/weight",
       "regexes of the feature importance tensors (one scalar per feature)"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("FeatureImportanceOverweight", parameters);
    Options options;
    options.threshold = reader.number("threshold", options.threshold);
    if (options.threshold < 0.0 || options.threshold > 1.0) {
      throw reader.invalid("threshold", "is not a share between 0 and 1");
    }
    options.nfeatures = reader.integer("nfeatures", options.nfeatures);
    if (options.nfeatures < 1) throw reader.invalid("nfeatures", "must be at least 1");
    options.tensor_regex = reader.regex_list("tensor_regex", options.tensor_regex);
    if (options.tensor_regex.empty()) {
      throw reader.invalid("tensor_regex", "selects no feature importance tensors");
    }
    reader.finish();
    return std::unique_ptr<Rule>(
        new FeatureImportanceOverweightRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool FeatureImportanceOverweightRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  std::vector<std::pair<double, std::string>> importances;
  double total = 0.0;
  for (const TensorRef& ref : selection_.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    const auto importance = saved_scalar(trial.tensor(ref), step, Mode::Global);
    if (!importance) continue;
    importances.emplace_back(*importance, name);
    total += *importance;
  }
  const auto n = static_cast<std::size_t>(options_.nfeatures);
  if (importances.size() <= n || total <= 0.0) return false;

  std::partial_sort(importances.begin(), importances.begin() + static_cast<std::ptrdiff_t>(n),
                    importances.end(), [](const auto& a, const auto& b) {
                      return a.first > b.first || (a.first == b.first && a.second < b.second);
                    });
  double top = 0.0;
  for (std::size_t i = 0; i < n; ++i) top += importances[i].first;
  const double share = top / total;
  if (share <= options_.threshold) return false;

  Finding finding;
  for (std::size_t i = 0; i < n && i < kMaxReportedTensors; ++i) {
    finding.tensors.push_back(importances[i].second);
    finding.figures.push_back({"importance", importances[i].first, importances[i].second});
  }
  finding.figures.push_back({"top_share", share, std::nullopt});
  finding.figures.push_back({"threshold", options_.threshold, std::nullopt});
  finding.figures.push_back({"features", static_cast<double>(importances.size()), std::nullopt});
  finding.message =
      "the " + std::to_string(n) + " most important of " + std::to_string(importances.size()) +
      " features hold " + format_figure(share * 100.0) + "% of the importance > threshold " +
      format_figure(options_.threshold * 100.0) + "% (largest: " + importances[0].second + " " +
      format_figure(importances[0].first) + ")";
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
