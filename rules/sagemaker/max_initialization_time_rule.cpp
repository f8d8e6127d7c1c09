#include "rules/sagemaker/max_initialization_time_rule.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {
namespace {

// Minutes whose duration in a system_clock's ticks cannot overflow (about 19 years).
constexpr double kMaxInitializationLongest = 1e7;

MaxInitializationTimeRule::Options max_initialization_options(ParameterReader& reader) {
  MaxInitializationTimeRule::Options options;
  options.threshold_minutes = reader.number("threshold", options.threshold_minutes);
  if (options.threshold_minutes <= 0.0) {
    throw reader.invalid("threshold", "is not a positive number of minutes");
  }
  if (options.threshold_minutes > kMaxInitializationLongest) {
    throw reader.invalid("threshold", "is out of range");
  }
  options.scan_interval_us = reader.integer("scan_interval_us", options.scan_interval_us);
  if (options.scan_interval_us <= 0) {
    throw reader.invalid("scan_interval_us", "is not a positive number of microseconds");
  }
  reader.finish();
  return options;
}

Finding max_initialization_finding(double seconds, double threshold_minutes,
                                   const std::string& what) {
  Finding finding;
  finding.figures = {{"initialization_minutes", seconds / 60.0, std::nullopt},
                     {"threshold", threshold_minutes, std::nullopt}};
  finding.message = "initialization took too long: " + what + ", more than the threshold of " +
                    format_figure(threshold_minutes) + " min";
  return finding;
}

// On a TensorBoard logdir (any series format): each run's first step, by its wall time (the
// first value of the run's "wall_time" series), against when the run started. Later values are
// not judged: only the first step ends initialization.
class MaxInitializationSeries final : public SeriesRule {
 public:
  explicit MaxInitializationSeries(double threshold_minutes)
      : threshold_minutes_(threshold_minutes) {}

  std::string_view name() const override { return "MaxInitializationTime"; }
  bool watches(const SeriesInfo& series) const override { return series.figure == "wall_time"; }
  std::size_t memory_points() const override { return 1; }
  std::string looks_for() const override {
    return "the wall time of each run's first step and when the run started";
  }
  std::vector<std::string> tag_regexes() const override { return {}; }
  std::optional<std::chrono::seconds> silence_threshold() const override {
    // A watch counts silence in whole seconds.
    return std::chrono::seconds(static_cast<std::int64_t>(std::ceil(threshold_minutes_ * 60.0)));
  }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    class State final : public SeriesState {
     public:
      State(std::string run, std::optional<double> run_started, double threshold_minutes)
          : run_(std::move(run)),
            run_started_(run_started),
            threshold_minutes_(threshold_minutes) {}

      bool add(std::int64_t step, double wall_time, Finding& finding) override {
        if (std::exchange(seen_first_, true) || !run_started_ || !std::isfinite(wall_time)) {
          mark_unjudged();  // a later step, or a first step or start without a time
          return false;
        }
        const double seconds = wall_time - *run_started_;
        if (seconds <= threshold_minutes_ * 60.0) return false;
        finding = max_initialization_finding(
            seconds, threshold_minutes_,
            "the first step of " + run_ + " (step " + std::to_string(step) + ") came " +
                format_figure(seconds / 60.0) + " min after the run started");
        finding.figures.insert(finding.figures.begin(),
                               {"first_step", static_cast<double>(step), std::nullopt});
        return true;
      }

     private:
      std::string run_;
      std::optional<double> run_started_;
      double threshold_minutes_;
      bool seen_first_ = false;
    };
    return std::make_unique<State>(
        series.run.empty() || series.run == "." ? "the logdir" : "run " + series.run,
        series.run_started, threshold_minutes_);
  }

  // Only before any step: once a step has come, initialization is over and a silence is
  // StalledTrainingRule's business.
  Finding silence(std::optional<std::int64_t> last_step, double seconds,
                  const std::string& where) const override {
    if (last_step) return {};
    return max_initialization_finding(seconds, threshold_minutes_,
                                      "no step at all in " + where + " in the " +
                                          format_figure(seconds / 60.0) +
                                          " min since the watch began");
  }

 private:
  double threshold_minutes_;
};

}  // namespace

MaxInitializationTimeRule::MaxInitializationTimeRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(options),
      threshold_(std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(options_.threshold_minutes * 60.0))),
      created_(std::chrono::system_clock::now()) {}

RuleSpec max_initialization_time_spec() {
  RuleSpec spec;
  spec.name = "MaxInitializationTime";
  spec.aliases = {"max_initialization_time"};
  spec.description =
      "the first step came more than threshold minutes after the run started (TensorBoard: the "
      "run's first record), or a watch saw no step within threshold minutes of its start";
  spec.parameters = {
      {"threshold", "float", "20", "minutes the first step may take to come"},
      {"scan_interval_us", "int", "60000000",
       "SageMaker's interval between scans of its timeline files; accepted, not used (steps are "
       "judged as they come)"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("MaxInitializationTime", parameters);
    return std::unique_ptr<Rule>(
        new MaxInitializationTimeRule(context.base_trial, max_initialization_options(reader)));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("MaxInitializationTime", parameters);
    return std::make_shared<MaxInitializationSeries>(
        max_initialization_options(reader).threshold_minutes);
  };
  return spec;
}

std::optional<std::chrono::milliseconds> MaxInitializationTimeRule::check_interval() const {
  // As StalledTrainingRule's: a tenth of the threshold, between 100 ms and 1 s.
  const auto tenth = std::chrono::duration_cast<std::chrono::milliseconds>(threshold_ / 10);
  return std::clamp(tenth, std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
}

bool MaxInitializationTimeRule::invoke_at_step(std::int64_t step) {
  const Mode mode = base_trial().mode(step).value_or(Mode::Global);
  if (std::exchange(first_step_invoked_, true)) {
    throw TensorUnavailableForStep("the job's start", step, mode, "only the first step is judged");
  }
  step_landed_ = true;
  const auto arrival = base_trial().step_arrival(step);
  // Before the rule started (a replay, or a watch that began after the first step) the job's
  // start is unknown.
  if (!arrival || *arrival < created_) {
    throw TensorUnavailableForStep("the job's start", step, mode, "unknown");
  }
  if (reported_ || *arrival - created_ <= threshold_) return false;
  const double seconds = std::chrono::duration<double>(*arrival - created_).count();
  report(max_initialization_finding(seconds, options_.threshold_minutes,
                                    "the first step (step " + std::to_string(step) + ") arrived " +
                                        format_figure(seconds / 60.0) +
                                        " min after the rule started watching"));
  return true;
}

bool MaxInitializationTimeRule::invoke_at_time(std::chrono::system_clock::time_point now) {
  if (reported_ || step_landed_ || now - created_ <= threshold_) return false;
  // A step the rule has not been invoked at yet has come all the same.
  if (!base_trial().steps(Mode::Global, true).empty()) {
    step_landed_ = true;
    return false;
  }
  reported_ = true;
  const double seconds = std::chrono::duration<double>(now - created_).count();
  Finding finding =
      max_initialization_finding(seconds, options_.threshold_minutes,
                                 "no step at all in the " + format_figure(seconds / 60.0) +
                                     " min since the rule started watching");
  finding.step = std::nullopt;
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
