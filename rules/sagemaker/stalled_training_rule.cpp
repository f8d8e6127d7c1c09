#include "rules/sagemaker/stalled_training_rule.hpp"

#include <algorithm>

#include "rules/builtin_rules.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {
namespace {

// On a TensorBoard logdir: each run's steps, by the wall time their values were written (the
// run's "wall_time" series): a gap above the threshold between a step and the one before fires
// at the later step, as in a replay of smdebug files; a watch also asks silence() when the
// whole logdir has had no new step for that long.
class StalledSeries final : public SeriesRule {
 public:
  StalledSeries(std::int64_t threshold_seconds, bool stop_training_on_fire)
      : threshold_(threshold_seconds), stop_training_on_fire_(stop_training_on_fire) {}

  std::string_view name() const override { return "StalledTrainingRule"; }
  bool watches(const SeriesInfo& series) const override { return series.figure == "wall_time"; }
  std::size_t memory_points() const override { return 1; }
  std::string looks_for() const override { return "steps"; }
  std::vector<std::string> tag_regexes() const override { return {}; }
  bool stops_training_on_fire() const override { return stop_training_on_fire_; }
  std::optional<std::chrono::seconds> silence_threshold() const override {
    return std::chrono::seconds(threshold_);
  }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    class State final : public SeriesState {
     public:
      State(std::string run, std::int64_t threshold)
          : run_(std::move(run)), threshold_(threshold) {}
      bool add(std::int64_t step, double wall_time, Finding& finding) override {
        const auto previous = last_;
        last_ = {step, wall_time};
        if (!previous || wall_time - previous->second <= static_cast<double>(threshold_)) {
          return false;
        }
        const double gap = wall_time - previous->second;
        finding.figures = {{"seconds_without_step", gap, std::nullopt},
                           {"threshold", static_cast<double>(threshold_), std::nullopt}};
        finding.message = "no new step for " + format_figure(gap) + " s in " + run_ +
                          " (after step " + std::to_string(previous->first) + ", until step " +
                          std::to_string(step) + "), more than the threshold of " +
                          std::to_string(threshold_) + " s";
        return true;
      }

     private:
      std::string run_;
      std::int64_t threshold_;
      std::optional<std::pair<std::int64_t, double>> last_;
    };
    return std::make_unique<State>(
        series.run.empty() || series.run == "." ? "the logdir" : "run " + series.run, threshold_);
  }

  Finding silence(std::optional<std::int64_t> last_step, double seconds,
                  const std::string& where) const override {
    Finding finding;
    finding.step = last_step;
    finding.figures = {{"seconds_without_step", seconds, std::nullopt},
                       {"threshold", static_cast<double>(threshold_), std::nullopt}};
    finding.message = "no new step for " + format_figure(seconds) + " s in " + where +
                      (last_step ? " since step " + std::to_string(*last_step) : " (none yet)") +
                      ", more than the threshold of " + std::to_string(threshold_) + " s";
    return finding;
  }

 private:
  std::int64_t threshold_;
  bool stop_training_on_fire_;
};

double seconds_between(std::chrono::system_clock::time_point from,
                       std::chrono::system_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

StalledTrainingRule::StalledTrainingRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      threshold_(std::chrono::seconds(options_.threshold_seconds)),
      created_(std::chrono::system_clock::now()) {}

RuleSpec stalled_training_rule_spec() {
  using Options = StalledTrainingRule::Options;
  RuleSpec spec;
  spec.name = "StalledTrainingRule";
  spec.aliases = {"stalled_training_rule"};
  spec.description =
      "no new step for longer than threshold seconds (live: from a timer; replay: from the "
      "index files' timestamps)";
  spec.parameters = {
      {"threshold", "int", "1800", "seconds without a new step after which the rule fires"},
      {"stop_training_on_fire", "bool", "False",
       "stop training when the rule fires (needs a stop action: the rule's Actions, or "
       "--stop-pid / --stop-command)"},
      {"training_job_name_prefix", "string", "",
       "SageMaker's prefix of the job to stop; named in the rule's messages"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("StalledTrainingRule", parameters);
    Options options;
    options.threshold_seconds = reader.integer("threshold", options.threshold_seconds);
    if (options.threshold_seconds <= 0) {
      throw reader.invalid("threshold", "is not a positive number of seconds");
    }
    // Seconds as a system_clock duration must not overflow (about 292 years in nanoseconds).
    if (options.threshold_seconds > std::int64_t{9'000'000'000}) {
      throw reader.invalid("threshold", "is out of range");
    }
    options.stop_training_on_fire =
        reader.boolean("stop_training_on_fire", options.stop_training_on_fire);
    options.training_job_name_prefix =
        reader.text("training_job_name_prefix", options.training_job_name_prefix);
    reader.finish();
    return std::unique_ptr<Rule>(new StalledTrainingRule(context.base_trial, std::move(options)));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("StalledTrainingRule", parameters);
    const std::int64_t threshold = reader.integer("threshold", 1800);
    if (threshold <= 0 || threshold > std::int64_t{9'000'000'000}) {
      throw reader.invalid("threshold", "is not a positive number of seconds in range");
    }
    const bool stop_training_on_fire = reader.boolean("stop_training_on_fire", false);
    reader.text("training_job_name_prefix", "");
    reader.finish();
    return std::make_shared<StalledSeries>(threshold, stop_training_on_fire);
  };
  return spec;
}

std::optional<std::chrono::milliseconds> StalledTrainingRule::check_interval() const {
  // A tenth of the threshold, between 100 ms and 1 s: a stall is seen at most that late, and a
  // check costs next to nothing.
  const auto tenth = std::chrono::duration_cast<std::chrono::milliseconds>(threshold_ / 10);
  return std::clamp(tenth, std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
}

bool StalledTrainingRule::invoke_at_step(std::int64_t step) {
  const auto arrival = base_trial().step_arrival(step);
  if (!arrival) return false;  // no time known for this step: nothing to measure
  const std::optional<std::int64_t> previous_step = last_step_;
  const std::optional<std::chrono::system_clock::time_point> previous = last_arrival_;
  const bool already_reported = stall_reported_;
  last_step_ = step;
  last_arrival_ = previous ? std::max(*previous, *arrival) : *arrival;
  stall_reported_ = false;
  if (!previous || already_reported || *arrival - *previous <= threshold_) return false;

  const double gap = seconds_between(*previous, *arrival);
  report(stall_finding(previous_step, gap,
                       "step " + std::to_string(step) + " arrived " + format_figure(gap) +
                           " s after step " + std::to_string(previous_step.value_or(-1))));
  return true;
}

bool StalledTrainingRule::invoke_at_time(std::chrono::system_clock::time_point now) {
  if (stall_reported_) return false;
  const auto since = last_arrival_.value_or(created_);
  if (now - since <= threshold_) return false;
  stall_reported_ = true;
  const double silence = seconds_between(since, now);
  Finding finding = stall_finding(
      last_step_, silence,
      last_step_ ? "no new step for " + format_figure(silence) + " s since step " +
                       std::to_string(*last_step_)
                 : "no step at all in the " + format_figure(silence) + " s since the rule started");
  finding.step = last_step_;
  report(std::move(finding));
  return true;
}

Finding StalledTrainingRule::stall_finding(std::optional<std::int64_t> last_step, double seconds,
                                           const std::string& what) const {
  Finding finding;
  const double threshold = static_cast<double>(options_.threshold_seconds);
  if (last_step) {
    finding.figures.push_back({"last_step", static_cast<double>(*last_step), std::nullopt});
  }
  finding.figures.push_back({"seconds_without_step", seconds, std::nullopt});
  finding.figures.push_back({"threshold", threshold, std::nullopt});
  finding.message = "training stalled: " + what + " > threshold " + format_figure(threshold) + " s";
  if (!options_.training_job_name_prefix.empty()) {
    finding.message += " (training job " + options_.training_job_name_prefix + "*)";
  }
  return finding;
}

}  // namespace rulestream
