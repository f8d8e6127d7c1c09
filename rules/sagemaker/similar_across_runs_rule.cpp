#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/value_closeness.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's SimilarAcrossRuns (seed 002): compares the base trial's tensors with another
// trial's, and fires at a step when a selected tensor's value differs between the two runs, as
// numpy.allclose (rtol 1e-05, atol 1e-08, equal_nan=True) judges it, or its shape differs.
// Tensors come from collection_names and tensor_regex (union; every tensor when neither is
// given). The same step is found in the other run by mode and mode step (global step for
// GLOBAL), so runs that interleave TRAIN and EVAL steps differently still line up. A tensor the
// other run did not save at that step, or saved only as reductions, is not compared; a step
// where nothing could be compared is skipped (TensorUnavailableForStep).
// The other run: SageMaker's `other_trial` names a training job; here it names one of the
// other trials the rule is given (the CLI's extra PATHs) by trial name or path, and may be left
// out when there is exactly one.
class SimilarAcrossRunsRule final : public Rule {
 public:
  struct Options {
    std::string other_trial;    // "" when not given
    TensorSelection selection;  // collection_names, tensor_regex
  };

  // `other` indexes other_trials: the run compared with.
  SimilarAcrossRunsRule(Trial base_trial, std::vector<Trial> other_trials, std::size_t other,
                        Options options);

  std::string_view name() const override { return "SimilarAcrossRuns"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(); }

  const Options& options() const { return options_; }

 private:
  std::size_t other_;
  Options options_;
  // NaN equals NaN here: two runs that both produce NaN at an element agree there (that the NaN is
  // a problem is ExplodingTensor's to say).
  Tolerance tolerance_{.equal_nan = true};
};

namespace {

std::string trial_list(const std::vector<Trial>& trials) {
  std::string out;
  for (const Trial& trial : trials) {
    out += (out.empty() ? "" : ", ") + trial.name() + " (" + trial.path() + ")";
  }
  return out;
}

bool names_trial(const std::string& wanted, const Trial& trial) {
  const auto strip = [](std::string text) {
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
  };
  return wanted == trial.name() || strip(wanted) == strip(trial.path());
}

// Whether a value is one allclose compares (real numbers, not strings or complex ones).
bool comparable(const TensorValue& value) {
  return !value.is_string() && is_real_numeric(value.dtype());
}

// Whether two records encode the same value: equal TensorProto bytes (a value that came decoded
// from a cache has none to compare).
bool same_encoding(const EncodedValue& a, const EncodedValue& b) {
  const auto x = a.encoded();
  const auto y = b.encoded();
  return !x.empty() && x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size()) == 0;
}

// How many bytes of records each run's values are read at a time. The values compared at once
// are held in vectors of EncodedValue (144 bytes each): a quarter MiB of small records, a few
// hundred values, keeps those vectors small enough for malloc to hand the same memory back at
// every read. A step's 2,000 values at once took fresh pages each time (a sixth of the rule's
// samples were page faults).
constexpr std::uint64_t kCompareBytesAtATime = std::uint64_t{256} << 10;

std::string shape_text(const Shape& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

SimilarAcrossRunsRule::SimilarAcrossRunsRule(Trial base_trial, std::vector<Trial> other_trials,
                                             std::size_t other, Options options)
    : Rule(std::move(base_trial), std::move(other_trials)),
      other_(other),
      options_(std::move(options)) {}

RuleSpec similar_across_runs_spec() {
  using Options = SimilarAcrossRunsRule::Options;
  RuleSpec spec;
  spec.name = "SimilarAcrossRuns";
  spec.aliases = {"similar_across_runs"};
  spec.description = "tensors that differ from another run of the same job";
  spec.parameters = {
      {"other_trial", "string", "",
       "name or path of the other trial (one of the extra PATHs; optional when only one)"},
      TensorSelection::collections_parameter("collections whose tensors are compared"),
      TensorSelection::regexes_parameter(
          "regexes of tensor names to compare (with collections: union)")};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("SimilarAcrossRuns", parameters);
    Options options;
    options.other_trial = reader.text("other_trial", options.other_trial);
    options.selection = TensorSelection::read(reader, options.selection);
    reader.finish();

    const auto& others = context.other_trials;
    if (others.empty()) {
      throw reader.invalid("other_trial",
                           "cannot be compared with: no other trial was given (add its PATH)");
    }
    std::optional<std::size_t> chosen;
    if (options.other_trial.empty()) {
      if (others.size() > 1) {
        throw reader.invalid("other_trial",
                             "must name one of the other trials: " + trial_list(others));
      }
      chosen = 0;
    } else {
      for (std::size_t i = 0; i < others.size(); ++i) {
        if (names_trial(options.other_trial, others[i])) {
          chosen = i;
          break;
        }
      }
      if (!chosen) {
        throw reader.invalid("other_trial",
                             "is none of the other trials given: " + trial_list(others));
      }
    }
    return std::unique_ptr<Rule>(
        new SimilarAcrossRunsRule(context.base_trial, others, *chosen, std::move(options)));
  };
  return spec;
}

bool SimilarAcrossRunsRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const Trial& other = other_trials().at(other_);
  const Mode mode = trial.mode(step).value_or(Mode::Global);
  const std::int64_t mode_step = mode == Mode::Global ? step : trial.mode_step(step).value_or(step);

  const std::vector<TensorRef> names = options_.selection.tensor_refs(trial, step);
  // The other trial's tensors at the same step, in name order as ours are: each of ours is
  // matched by a merge rather than looked up by name in the other store.
  // Values are read by global step in both trials: the mode step is translated once here rather
  // than by each of thousands of reads. A step the other run does not have compares nothing.
  const std::optional<std::int64_t> their_step = other.global_step(mode, mode_step);
  const std::vector<TensorRef> their_names =
      their_step ? other.tensor_refs({.step = *their_step}) : std::vector<TensorRef>{};
  // The tensors both runs saved, in name order, read a few MiB of values at a time from each
  // run (one lookup pass and one read per event file, not one per value), and compared as
  // their records encode them: equal encodings are equal values, which one memcmp tells. Only
  // values whose encodings differ are decoded (a rerun that is not bit for bit the same).
  std::vector<TensorRef> ours;
  std::vector<TensorRef> theirs;
  auto their_ref = their_names.begin();
  for (const TensorRef& ref : names) {
    while (their_ref != their_names.end() && their_ref->name() < ref.name()) ++their_ref;
    if (their_ref == their_names.end() || their_ref->name() != ref.name()) continue;
    ours.push_back(ref);
    theirs.push_back(*their_ref);
  }
  std::int64_t compared = 0;
  Finding finding;
  for (std::size_t done = 0; done < ours.size() && finding.tensors.size() < kMaxReportedTensors;) {
    const auto our_values = trial.encoded_values_at(std::span(ours).subspan(done), step,
                                                    Mode::Global, kCompareBytesAtATime);
    const auto their_values =
        other.encoded_values_at(std::span(theirs).subspan(done, our_values.size()), *their_step,
                                Mode::Global, kCompareBytesAtATime);
    for (std::size_t k = 0; k < their_values.size(); ++k) {
      if (!our_values[k] || !their_values[k]) continue;
      const EncodedValue& mine_encoded = *our_values[k];
      const EncodedValue& their_encoded = *their_values[k];
      if (same_encoding(mine_encoded, their_encoded)) {
        // Equal values, close whatever the tolerance (NaN equals NaN here). Ours must decode,
        // which the pipeline checked as it landed; strings and complex values are not compared.
        const std::optional<DType> dtype =
            mine_encoded.checked() ? mine_encoded.dtype() : mine_encoded.decode().dtype();
        if (dtype && is_real_numeric(*dtype)) ++compared;
        continue;
      }
      const TensorValue mine = mine_encoded.decode();
      const TensorValue other_value = their_encoded.decode();
      if (!comparable(mine) || !comparable(other_value)) continue;
      ++compared;
      const Closeness closeness = compare_values(mine, other_value, tolerance_);
      if (closeness.close()) continue;

      const std::string& name = ours[done + k].name();
      finding.tensors.push_back(name);
      if (!closeness.same_shape) {
        finding.figures.push_back({"size", static_cast<double>(mine.size()), name});
        finding.figures.push_back({"other_size", static_cast<double>(other_value.size()), name});
        if (finding.message.empty()) {
          finding.message = name + " has shape " + shape_text(mine.shape()) + " but " +
                            shape_text(other_value.shape()) + " in " + other.name();
        }
      } else {
        finding.figures.push_back({"differing", static_cast<double>(closeness.differing), name});
        finding.figures.push_back({"size", static_cast<double>(mine.size()), name});
        finding.figures.push_back({"max_abs_difference", closeness.max_abs_difference, name});
        if (finding.message.empty()) {
          finding.message = name + " differs from " + other.name() + " in " +
                            std::to_string(closeness.differing) + " of " +
                            std::to_string(mine.size()) + " values (largest difference " +
                            format_figure(closeness.max_abs_difference) + ", rtol " +
                            format_figure(tolerance_.rtol) + ", atol " +
                            format_figure(tolerance_.atol) + ")";
        }
      }
      if (finding.tensors.size() == kMaxReportedTensors) break;
    }
    done += their_values.size();
  }
  if (compared == 0) {
    throw TensorUnavailableForStep(names.empty() ? "(selected tensors)" : names.front().name(),
                                   step, Mode::Global,
                                   "no selected tensor was saved at this step by both " +
                                       trial.name() + " and " + other.name());
  }
  if (finding.tensors.empty()) return false;
  finding.figures.push_back({"rtol", tolerance_.rtol, std::nullopt});
  finding.figures.push_back({"atol", tolerance_.atol, std::nullopt});
  finding.message += more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
