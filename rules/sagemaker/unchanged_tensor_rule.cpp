#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/tensor_states.hpp"
#include "rules/support/training_steps.hpp"
#include "rules/support/value_closeness.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's UnchangedTensor (seed 002). At each training step (rules/support/training_steps.hpp),
// for each selected tensor saved there with its values: the value at this step and the values at
// the tensor's previous num_steps - 1 saved training steps (not necessarily consecutive) are
// compared as numpy.allclose(older, current, rtol, atol, equal_nan) does, element by element:
// |older - current| <= atol + rtol * |current|, infinities equal only to themselves, NaN equal
// to NaN only with equal_nan. The rule fires when all of them are close to the current value,
// i.e. the tensor has not moved over its last num_steps saves. A tensor with fewer saves, or
// whose shape changed, is not called unchanged; strings and complex values are skipped.
// Tensors come from collection_names and tensor_regex (their union), every tensor when neither
// is given.
class UnchangedTensorRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex
    std::int64_t num_steps = 3;
    double rtol = 1e-05;
    double atol = 1e-08;
    bool equal_nan = false;
  };

  UnchangedTensorRule(Trial base_trial, Options options);

  std::string_view name() const override { return "UnchangedTensor"; }
  bool invoke_at_step(std::int64_t step) override;
  // A step's tensors and their screens depend on the step alone: they are read ahead, and only
  // the saved steps, the kept screens and the comparisons are serial (Rule::reads_ahead).
  bool reads_ahead() const override { return true; }
  std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const override;
  // Values are compared only when reductions say they may be close (read on demand then).
  RequiredTensors required_tensors() const override { return options_.selection.required(false); }

  const Options& options() const { return options_; }

 private:
  // The screening figures (kCloseScreenReductions) of a tensor at one saved step.
  struct Screen {
    std::int64_t step = 0;
    CloseScreen screen;
  };
  // A tensor's screen at the step being evaluated: nullopt when it was saved there only as
  // reductions; `failure` when reading them threw anything else.
  struct CurrentScreen {
    std::optional<CloseScreen> screen;
    std::exception_ptr failure;
  };
  // What read_step() reads: the selected tensors and their screens at a training step.
  struct Reading;
  // The screens of `refs` at `step`, in their order, found in parallel (they change no state).
  std::vector<CurrentScreen> current_screens(const Trial& trial, std::span<const TensorRef> refs,
                                             std::int64_t step) const;

  // What the rule keeps of one tensor: its saved training steps, and its screens at the last
  // num_steps of them as read at those steps (a step compares its value's screen with those of
  // the saves before it; reading them again from the trial was two thirds of the rule's
  // lookups).
  struct TensorState {
    TensorSaves saves;
    boost::container::small_vector<Screen, 3> screens;
  };
  // What judging one tensor at a step found: whether it is unchanged (the largest difference)
  // since which step, or what reading its values threw.
  struct Verdict {
    std::optional<double> largest;
    std::int64_t since_step = 0;
    std::exception_ptr failure;
  };
  // Moves one tensor's state on to `step` and judges it there. Touches that tensor's state
  // alone: different tensors are judged on different threads at once.
  Verdict judge(const Trial& trial, const Tensor& tensor, const CloseScreen& current_screen,
                TensorState& state, std::int64_t step) const;

  Options options_;
  TensorStates<TensorState> states_;
};

namespace {

UnchangedTensorRule::Options read_unchanged_tensor_options(ParameterReader& reader) {
  UnchangedTensorRule::Options options;
  options.selection = TensorSelection::read(reader, options.selection);
  options.num_steps = reader.integer("num_steps", options.num_steps);
  if (options.num_steps < 2) {
    throw reader.invalid("num_steps", "must be at least 2 (a step and one before it)");
  }
  options.rtol = reader.number("rtol", options.rtol);
  if (options.rtol < 0.0) throw reader.invalid("rtol", "must not be negative");
  options.atol = reader.number("atol", options.atol);
  if (options.atol < 0.0) throw reader.invalid("atol", "must not be negative");
  options.equal_nan = reader.boolean("equal_nan", options.equal_nan);
  return options;
}

// numpy.allclose for one element: |older - current| <= atol + rtol * |current|; an infinity is
// close only to itself, NaN only to NaN and only with equal_nan.
bool scalar_close(double older, double current, const UnchangedTensorRule::Options& options) {
  if (std::isnan(older) || std::isnan(current)) {
    return options.equal_nan && std::isnan(older) && std::isnan(current);
  }
  if (std::isinf(older) || std::isinf(current)) return older == current;
  return std::abs(older - current) <= options.atol + options.rtol * std::abs(current);
}

// On series of scalars (a TensorBoard logdir): a value close to each of the series' previous
// num_steps - 1 values fires. Training series only (EVAL ones are not training steps). With
// neither collection_names nor tensor_regex, the loss and gradient-norm series: what stands
// for the weights a logdir does not hold (a frozen model's loss and gradients stop moving),
// while learning rates, clip ranges and other settings hold still by design; otherwise
// tensor_regex's series, and the losses when collection_names names `losses`.
class UnchangedSeries final : public SeriesRule {
 public:
  explicit UnchangedSeries(UnchangedTensorRule::Options options)
      : options_(std::move(options)),
        selection_(SeriesSelection::either(
            std::find(options_.selection.collections.begin(), options_.selection.collections.end(),
                      "losses") != options_.selection.collections.end()
                ? std::optional(SeriesRole::Loss)
                : std::nullopt,
            compile_name_regexes(options_.selection.regexes))) {}

  std::string_view name() const override { return "UnchangedTensor"; }
  bool watches(const SeriesInfo& series) const override {
    if (series.mode == Mode::Eval) return false;
    if (options_.selection.selects_all()) {
      return series.role == SeriesRole::Loss || series.role == SeriesRole::GradientNorm;
    }
    return selection_.watches(series);
  }
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(options_.num_steps);
  }
  std::string looks_for() const override {
    return options_.selection.selects_all()
               ? "training loss or gradient-norm series (docs/tensorboard.md: which tags)"
               : selection_.describe();
  }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    class State final : public SeriesState {
     public:
      State(std::string name, const UnchangedTensorRule::Options& options)
          : name_(std::move(name)), options_(options) {}
      bool add(std::int64_t step, double value, Finding& finding) override {
        const auto previous = static_cast<std::size_t>(options_.num_steps - 1);
        bool unchanged = recent_.size() == previous;
        for (const auto& [older_step, older] : recent_) {
          unchanged = unchanged && scalar_close(older, value, options_);
        }
        const std::int64_t first_step = recent_.empty() ? step : recent_.front().first;
        recent_.emplace_back(step, value);
        if (recent_.size() > previous) recent_.erase(recent_.begin());
        if (!unchanged) return false;
        finding.tensors = {name_};
        finding.figures = {{"value", value, name_},
                           {"num_steps", static_cast<double>(options_.num_steps), std::nullopt}};
        finding.message = name_ + " has stayed at " + format_figure(value) + " over its last " +
                          std::to_string(options_.num_steps) + " values (steps " +
                          std::to_string(first_step) + " to " + std::to_string(step) + ")";
        return true;
      }

     private:
      std::string name_;
      UnchangedTensorRule::Options options_;
      std::vector<std::pair<std::int64_t, double>> recent_;  // the last num_steps - 1 values
    };
    return std::make_unique<State>(series.display_name(), options_);
  }

 private:
  UnchangedTensorRule::Options options_;
  SeriesSelection selection_;
};

// The tensors whose screens a task finds: their reductions are looked up in the store, each
// about a microsecond, so a task of a hundred is worth its cost.
constexpr std::size_t kScreensPerTask = 128;

}  // namespace

std::vector<UnchangedTensorRule::CurrentScreen> UnchangedTensorRule::current_screens(
    const Trial& trial, std::span<const TensorRef> refs, std::int64_t step) const {
  std::vector<CurrentScreen> screens(refs.size());
  for_ranges_in_parallel(refs.size(), kScreensPerTask, [&](std::size_t begin, std::size_t end) {
    // A handle counted apart: tasks making Tensors of one handle would fight over its count.
    const Trial own = trial.separately_counted();
    for (std::size_t i = begin; i != end; ++i) {
      try {
        const Tensor tensor = own.tensor(refs[i]);
        try {
          screens[i].screen = close_screen(tensor.value_reductions(kCloseScreenReductions, step));
        } catch (const TensorUnavailableForStep&) {
          // saved only as reductions at this step: no screen
        }
      } catch (...) {
        screens[i].failure = std::current_exception();
      }
    }
  });
  return screens;
}

UnchangedTensorRule::UnchangedTensorRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

RuleSpec unchanged_tensor_spec() {
  using Options = UnchangedTensorRule::Options;
  RuleSpec spec;
  spec.name = "UnchangedTensor";
  spec.aliases = {"unchanged_tensor"};
  spec.description = "tensors that stopped changing over their last num_steps saved steps";
  spec.parameters = {
      TensorSelection::collections_parameter(),
      TensorSelection::regexes_parameter(),
      {"num_steps", "int", "3", "saved steps (the current one included) that must all be close"},
      {"rtol", "float", "1e-05", "relative tolerance, as numpy.allclose"},
      {"atol", "float", "1e-08", "absolute tolerance, as numpy.allclose"},
      {"equal_nan", "bool", "False", "True: NaN compares equal to NaN"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("UnchangedTensor", parameters);
    Options options = read_unchanged_tensor_options(reader);
    reader.finish();
    return std::unique_ptr<Rule>(new UnchangedTensorRule(context.base_trial, std::move(options)));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("UnchangedTensor", parameters);
    Options options = read_unchanged_tensor_options(reader);
    reader.finish();
    return std::make_shared<UnchangedSeries>(std::move(options));
  };
  return spec;
}

// Nothing at a step that trains nothing (`training` false).
struct UnchangedTensorRule::Reading final : StepReading {
  bool training = false;
  std::vector<TensorRef> refs;
  std::vector<CurrentScreen> screens;
};

std::unique_ptr<StepReading> UnchangedTensorRule::read_step(const Trial& trial,
                                                            std::int64_t step) const {
  auto reading = std::make_unique<Reading>();
  reading->training = is_training_step(trial, step);
  if (!reading->training) return reading;
  reading->refs = options_.selection.tensor_refs(trial, step);
  reading->screens = current_screens(trial, reading->refs, step);
  return reading;
}

UnchangedTensorRule::Verdict UnchangedTensorRule::judge(const Trial& trial, const Tensor& tensor,
                                                        const CloseScreen& current_screen,
                                                        TensorState& state,
                                                        std::int64_t step) const {
  const auto wanted = static_cast<std::size_t>(options_.num_steps - 1);
  const TensorSaves::Steps previous = state.saves.advance(trial, tensor, step, wanted);
  // This save's screen is kept for the steps after it; the older saves' screens come from those
  // kept as their steps were read (a rule started in mid-job, or a tensor first selected now,
  // reads them from the trial).
  auto& screens = state.screens;
  if (screens.empty() || screens.back().step < step) {
    if (screens.size() == static_cast<std::size_t>(options_.num_steps)) {
      screens.erase(screens.begin());
    }
    screens.push_back({step, current_screen});
  }
  const auto screen_at = [&](std::int64_t older) -> CloseScreen {
    for (const Screen& kept : screens) {
      if (kept.step == older) return kept.screen;
    }
    return close_screen(tensor.value_reductions(kCloseScreenReductions, older));
  };
  Verdict verdict;
  if (previous.size() < wanted) return verdict;
  if (!current_screen.elements) return verdict;  // strings, complex: nothing to compare
  const Tolerance tolerance{options_.rtol, options_.atol, options_.equal_nan};

  // Values are read only when the reductions cannot tell: a tensor that changed almost always
  // shows it in its sum, and most tensors of a training job change at every step.
  std::optional<TensorValue> current;
  std::optional<double> largest = 0.0;
  for (auto it = previous.rbegin(); it != previous.rend() && largest; ++it) {
    CloseScreen older_screen;
    try {
      older_screen = screen_at(*it);
    } catch (const TensorUnavailableForStep&) {
      largest.reset();  // that save holds only reductions: nothing shows it did not change
      break;
    }
    if (!older_screen.elements || !may_be_close(older_screen, current_screen, tolerance)) {
      largest.reset();
      break;
    }
    if (!current) current = tensor.value(step);
    // numpy.allclose(older, current), left at the first block that is not close
    const std::optional<double> difference = close_within(tensor.value(*it), *current, tolerance);
    largest = difference ? std::optional(std::max(*largest, *difference)) : std::nullopt;
  }
  verdict.largest = largest;
  verdict.since_step = previous.front();
  return verdict;
}

bool UnchangedTensorRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const auto read = reading(step);
  const auto& screens_read = static_cast<const Reading&>(*read);
  if (!screens_read.training) return false;
  const std::vector<TensorRef>& refs = screens_read.refs;
  const std::vector<CurrentScreen>& found = screens_read.screens;
  // Every selected tensor is looked at, even past kMaxReportedTensors, so that each one's saved
  // steps stay complete. A tensor's state and verdict depend on that tensor alone: they are
  // worked out on as many threads as are free, then the finding is made here in name order, as
  // one thread would. Where a tensor could not be read, every other tensor still moves on to
  // this step (its saves are what the trial saved), and the first failure in name order is
  // thrown once all have.
  const std::vector<TensorState*>& states = states_.of(refs);
  std::vector<Verdict> verdicts(refs.size());
  for_ranges_in_parallel(refs.size(), kScreensPerTask, [&](std::size_t begin, std::size_t end) {
    // A handle counted apart: tasks making Tensors of one handle would fight over its count.
    const Trial own = trial.separately_counted();
    for (std::size_t i = begin; i != end; ++i) {
      if (found[i].failure || !found[i].screen) continue;  // only reductions: nothing to compare
      try {
        verdicts[i] = judge(own, own.tensor(refs[i]), *found[i].screen, *states[i], step);
      } catch (...) {
        verdicts[i].failure = std::current_exception();
      }
    }
  });
  Finding finding;
  std::string first_detail;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (found[i].failure) std::rethrow_exception(found[i].failure);
    const Verdict& verdict = verdicts[i];
    if (verdict.failure) std::rethrow_exception(verdict.failure);
    if (!verdict.largest || finding.tensors.size() == kMaxReportedTensors) continue;
    const std::string& name = refs[i].name();
    finding.tensors.push_back(name);
    finding.figures.push_back({"max_abs_difference", *verdict.largest, name});
    finding.figures.push_back({"since_step", static_cast<double>(verdict.since_step), name});
    if (first_detail.empty()) {
      first_detail = " unchanged over saved steps " + std::to_string(verdict.since_step) + ".." +
                     std::to_string(step) + " (" + std::to_string(options_.num_steps) +
                     " saves, largest difference " + format_figure(*verdict.largest) +
                     " within rtol " + format_figure(options_.rtol) + ", atol " +
                     format_figure(options_.atol) + ")";
    }
  }
  if (finding.tensors.empty()) return false;

  finding.figures.push_back({"num_steps", static_cast<double>(options_.num_steps), std::nullopt});
  finding.figures.push_back({"rtol", options_.rtol, std::nullopt});
  finding.figures.push_back({"atol", options_.atol, std::nullopt});
  finding.message = finding.tensors.front() + first_detail + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
