#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/mode.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {

// The durations of one sequence of steps (a run's, or one mode's), each judged against the level
// of those before it: the median of the last kWindow durations and their spread, 1.4826 x their
// median absolute deviation (the standard deviation, for normal durations, that one slow step
// cannot inflate), at least kLeastSpread of the median and kLeastSpreadSeconds (so that steps
// timed alike to the microsecond do not make every slightly slower one an outlier, and time
// differences below a millisecond, a clock's or a file system's rather than training's, never
// make one: the times of files copied in a burst). A duration is an outlier above
// median + stddev x spread; the first n_outliers outliers are counted and ignored, every later
// one fires. The first kWarmup durations only make the level.
class StepDurationLevel {
 public:
  static constexpr std::size_t kWindow = 100;
  static constexpr std::size_t kWarmup = 10;
  static constexpr double kLeastSpread = 0.05;
  static constexpr double kLeastSpreadSeconds = 0.001;

  struct Judgement {
    bool judged = false;  // false in the warm-up
    bool outlier = false;
    bool fires = false;  // an outlier after the first n_outliers
    double median = 0.0;
    double spread = 0.0;
    double threshold = 0.0;
    std::int64_t outliers = 0;  // outliers so far, this one included
    std::size_t level_of = 0;   // durations the level was measured over
  };

  StepDurationLevel(double stddev, std::int64_t n_outliers);

  // Judges `duration` (seconds, >= 0), then adds it to the level.
  Judgement judge(double duration);

 private:
  double stddev_;
  std::int64_t n_outliers_;
  std::vector<double> window_;  // a ring of the last kWindow durations
  std::size_t oldest_ = 0;
  std::vector<double> scratch_;
  std::int64_t outliers_ = 0;
};

// SageMaker's profiler rule StepOutlier: a step that took far longer than the run's steps
// usually take. A step's duration is the time from the previous step to it, divided by the
// number of steps between them (a saved step may stand for several). On an smdebug trial the
// times are the steps' arrivals (Trial::step_arrival: when a watch saw the step's first index
// file, or that file's modification time in a replay), and each mode's steps are judged
// against their own level; a duration is measured only between consecutive saved steps of the
// same mode (the gap around an evaluation pass is neither's). On a TensorBoard logdir (or any
// series format) the series form judges each run's "wall_time" series.
//
// Steps that are not judged (without a time, the first of a mode's sequence, the warm-up, a
// time earlier than the step before) are skipped, not evaluated: a job without usable times
// ends in Error or NotApplicable, never NoIssuesFound.
class StepOutlierRule final : public Rule {
 public:
  struct Options {
    double stddev = 3.0;
    std::optional<Mode> mode;  // nullopt: every mode, each on its own level
    std::int64_t n_outliers = 10;
    std::int64_t scan_interval_us = 60'000'000;  // SageMaker's; accepted, not used
  };

  StepOutlierRule(Trial base_trial, Options options);
  ~StepOutlierRule() override;

  std::string_view name() const override { return "StepOutlier"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override {
    return RequiredTensors{.values = false, .nothing = true};
  }

  const Options& options() const { return options_; }

 private:
  Options options_;
  std::optional<Mode> last_mode_;  // of the step invoked before
  // The last step of the current sequence of one mode with a time, and that time.
  std::optional<std::pair<std::int64_t, std::chrono::system_clock::time_point>> last_;
  std::map<Mode, std::unique_ptr<StepDurationLevel>> levels_;
};

namespace {

// 1.4826 x the median absolute deviation estimates the standard deviation of normal values: so
// SageMaker's `stddev` keeps its meaning, a number of standard deviations.
constexpr double kStepOutlierMadScale = 1.4826;

// The median of `values` (numpy's: the mean of the middle two of an even count); reorders them.
double step_outlier_median(std::vector<double>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  const double upper = *middle;
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), middle) + upper) / 2.0;
}

// "step 57" or "steps 51-60", as a duration's subject.
std::string step_outlier_steps(std::int64_t previous_step, std::int64_t step) {
  if (step - previous_step == 1) return "step " + std::to_string(step);
  return "steps " + std::to_string(previous_step + 1) + "-" + std::to_string(step);
}

// Why the rule fires at `step`: `where` names the sequence ("(TRAIN)", "of run train").
Finding step_outlier_finding(const std::string& where, std::int64_t previous_step,
                             std::int64_t step, double seconds,
                             const StepDurationLevel::Judgement& judged, double stddev,
                             std::int64_t n_outliers) {
  const std::int64_t steps = step - previous_step;
  const double duration = seconds / static_cast<double>(steps);
  Finding finding;
  finding.figures = {{"step_duration", duration, std::nullopt},
                     {"median_step_duration", judged.median, std::nullopt},
                     {"spread", judged.spread, std::nullopt},
                     {"threshold", judged.threshold, std::nullopt},
                     {"outliers", static_cast<double>(judged.outliers), std::nullopt},
                     {"stddev", stddev, std::nullopt},
                     {"n_outliers", static_cast<double>(n_outliers), std::nullopt}};
  finding.message = step_outlier_steps(previous_step, step) + " " + where + " took " +
                    format_figure(duration) + " s" +
                    (steps > 1 ? " each (" + format_figure(seconds) + " s after step " +
                                     std::to_string(previous_step) + ")"
                               : std::string()) +
                    ", more than the threshold of " + format_figure(judged.threshold) +
                    " s = median " + format_figure(judged.median) + " s + stddev " +
                    format_figure(stddev) + " x spread " + format_figure(judged.spread) +
                    " s of the last " + std::to_string(judged.level_of) +
                    " step durations; outlier " + std::to_string(judged.outliers) +
                    ", more than n_outliers " + std::to_string(n_outliers);
  return finding;
}

// Parses SageMaker's `mode`: None (absent, empty or "None") is every mode.
std::optional<Mode> step_outlier_mode(ParameterReader& reader) {
  const std::string text = reader.text("mode", "None");
  std::string lower;
  for (const char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (lower.empty() || lower == "none") return std::nullopt;
  const auto mode = mode_from_name(text);
  if (!mode) throw reader.invalid("mode", "is not a mode (None, TRAIN, EVAL, PREDICT or GLOBAL)");
  return mode;
}

StepOutlierRule::Options step_outlier_options(ParameterReader& reader) {
  StepOutlierRule::Options options;
  options.stddev = reader.number("stddev", options.stddev);
  if (options.stddev <= 0.0) throw reader.invalid("stddev", "is not a positive number");
  options.mode = step_outlier_mode(reader);
  options.n_outliers = reader.integer("n_outliers", options.n_outliers);
  if (options.n_outliers < 0) throw reader.invalid("n_outliers", "is not a count (0 or more)");
  options.scan_interval_us = reader.integer("scan_interval_us", options.scan_interval_us);
  if (options.scan_interval_us <= 0) {
    throw reader.invalid("scan_interval_us", "is not a positive number of microseconds");
  }
  reader.finish();
  return options;
}

// On a TensorBoard logdir (any series format): each run's steps by the wall time their values
// were written (the run's "wall_time" series). NaN times (a format without a time for a step)
// are skipped: the next duration is measured from the last step with a time.
class StepOutlierSeries final : public SeriesRule {
 public:
  explicit StepOutlierSeries(StepOutlierRule::Options options) : options_(options) {}

  std::string_view name() const override { return "StepOutlier"; }
  bool watches(const SeriesInfo& series) const override {
    return series.figure == "wall_time" && (!options_.mode || series.mode == *options_.mode);
  }
  std::size_t memory_points() const override { return StepDurationLevel::kWindow + 1; }
  std::string looks_for() const override {
    return options_.mode ? "the wall times of " + std::string(mode_name(*options_.mode)) + " steps"
                         : "the wall times of steps";
  }
  std::vector<std::string> tag_regexes() const override { return {}; }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    class State final : public SeriesState {
     public:
      State(std::string where, const StepOutlierRule::Options& options)
          : where_(std::move(where)),
            stddev_(options.stddev),
            n_outliers_(options.n_outliers),
            level_(options.stddev, options.n_outliers) {}

      bool add(std::int64_t step, double wall_time, Finding& finding) override {
        if (!std::isfinite(wall_time)) {  // no time for this step
          mark_unjudged();
          return false;
        }
        const auto previous = std::exchange(last_, std::pair{step, wall_time});
        if (!previous || step <= previous->first || wall_time < previous->second) {
          mark_unjudged();  // no duration: the first step, or a clock that went back
          return false;
        }
        const double seconds = wall_time - previous->second;
        const auto judged = level_.judge(seconds / static_cast<double>(step - previous->first));
        if (!judged.judged) mark_unjudged();
        if (!judged.fires) return false;
        finding = step_outlier_finding(where_, previous->first, step, seconds, judged, stddev_,
                                       n_outliers_);
        return true;
      }

     private:
      std::string where_;
      double stddev_;
      std::int64_t n_outliers_;
      StepDurationLevel level_;
      std::optional<std::pair<std::int64_t, double>> last_;
    };
    return std::make_unique<State>(
        series.run.empty() || series.run == "." ? "of the logdir" : "of run " + series.run,
        options_);
  }

 private:
  StepOutlierRule::Options options_;
};

}  // namespace

StepDurationLevel::StepDurationLevel(double stddev, std::int64_t n_outliers)
    : stddev_(stddev), n_outliers_(n_outliers) {
  window_.reserve(kWindow);
}

StepDurationLevel::Judgement StepDurationLevel::judge(double duration) {
  Judgement judged;
  if (window_.size() >= kWarmup) {
    scratch_ = window_;
    const double median = step_outlier_median(scratch_);
    for (double& value : scratch_) value = std::abs(value - median);
    const double deviation = step_outlier_median(scratch_);
    judged.judged = true;
    judged.median = median;
    judged.spread =
        std::max({kStepOutlierMadScale * deviation, kLeastSpread * median, kLeastSpreadSeconds});
    judged.threshold = median + stddev_ * judged.spread;
    judged.level_of = window_.size();
    judged.outlier = duration > judged.threshold;
    if (judged.outlier) ++outliers_;
    judged.outliers = outliers_;
    judged.fires = judged.outlier && outliers_ > n_outliers_;
  }
  if (window_.size() < kWindow) {
    window_.push_back(duration);
  } else {
    window_[oldest_] = duration;
    oldest_ = (oldest_ + 1) % kWindow;
  }
  return judged;
}

StepOutlierRule::StepOutlierRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options) {}

StepOutlierRule::~StepOutlierRule() = default;

RuleSpec step_outlier_spec() {
  RuleSpec spec;
  spec.name = "StepOutlier";
  spec.aliases = {"step_outlier"};
  spec.description =
      "a step that took longer than the median step duration + stddev x its spread (robust: "
      "1.4826 x the median absolute deviation of the last 100 durations), after the first "
      "n_outliers such steps; steps timed by their arrival (smdebug) or wall time (TensorBoard)";
  spec.parameters = {
      {"stddev", "float", "3",
       "how many spreads (robust standard deviations) above the median step duration a step "
       "must take to be an outlier"},
      {"mode", "string", "None",
       "judge only steps of this mode (TRAIN, EVAL, PREDICT, GLOBAL); None: every mode, each "
       "against its own durations"},
      {"n_outliers", "int", "10",
       "outliers ignored before the rule fires: it fires at the next one and every later one"},
      {"scan_interval_us", "int", "60000000",
       "SageMaker's interval between scans of its timeline files; accepted, not used (steps are "
       "judged as they come)"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("StepOutlier", parameters);
    return std::unique_ptr<Rule>(
        new StepOutlierRule(context.base_trial, step_outlier_options(reader)));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("StepOutlier", parameters);
    return std::make_shared<StepOutlierSeries>(step_outlier_options(reader));
  };
  return spec;
}

bool StepOutlierRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const Mode mode = trial.mode(step).value_or(Mode::Global);
  // A duration is measured between consecutive saved steps of one mode: the time around a switch
  // (an evaluation pass beginning or ending) belongs to neither mode's steps.
  if (last_mode_ != mode) last_.reset();
  last_mode_ = mode;
  if (options_.mode && mode != *options_.mode) {
    throw TensorUnavailableForStep("the step's time", step, mode, "not a step of the mode judged");
  }
  const auto arrival = trial.step_arrival(step);
  if (!arrival) throw TensorUnavailableForStep("the step's time", step, mode, "unknown");
  const auto previous = std::exchange(last_, std::pair{step, *arrival});
  if (!previous || step <= previous->first || *arrival < previous->second) {
    throw TensorUnavailableForStep("the step's time", step, mode,
                                   "no earlier step of its mode to measure from");
  }
  const double seconds = std::chrono::duration<double>(*arrival - previous->second).count();
  auto& level = levels_[mode];
  if (!level) level = std::make_unique<StepDurationLevel>(options_.stddev, options_.n_outliers);
  const auto judged = level->judge(seconds / static_cast<double>(step - previous->first));
  if (!judged.judged) {
    throw TensorUnavailableForStep("the step's time", step, mode,
                                   "too few step durations to judge by yet");
  }
  if (!judged.fires) return false;
  report(step_outlier_finding("(" + std::string(mode_name(mode)) + ")", previous->first, step,
                              seconds, judged, options_.stddev, options_.n_outliers));
  return true;
}

}  // namespace rulestream
