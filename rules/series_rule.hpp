#pragma once

// Rules over series of scalars, the shape of today's training logs: a TensorBoard tag of one run,
// or an smdebug scalar tensor (a loss). A series rule keeps a small state per series and sees
// each value once, steps increasing, so it runs on a stream of millions of points in bounded
// memory; the TensorBoard pipeline feeds it directly, and SeriesRuleOnTrial runs the same rule
// over an smdebug trial.
//
// Restarts (a run resumed from a checkpoint writes steps again) are the caller's business: it
// keeps a series' last memory_points() values, and at a restart builds a fresh state from those
// before the restart step, so a rule never sees a step go back.
//
// Besides its tags, each run of a logdir is a series of its own, figure "wall_time": the wall
// time of each new step's first value (what StalledTrainingRule measures gaps with).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/name_regex.hpp"
#include "core/model/scalar_series.hpp"
#include "rules/rule.hpp"

namespace rulestream {

class ParameterReader;
struct ParameterSpec;

// A rule's state for one series. Not thread-safe: one series is fed by one thread at a time.
class SeriesState {
 public:
  virtual ~SeriesState() = default;
  // The series' next value (steps increase from call to call). True when the rule's condition
  // is met at this value; `finding` then says why.
  virtual bool add(std::int64_t step, double value, Finding& finding) = 0;

  // True once, after the value at which the condition the rule last fired for cleared (it has
  // been clear for the rule's documented span, and the rule is ready to fire again): the
  // incident that firing opened resolves there. Rules that judge each value alone never say so;
  // their incidents end after a quiet span, or with the job (engine/graph/incident_book.hpp).
  bool take_cleared() { return std::exchange(cleared_, false); }

  // True once, after a value the rule did not judge (a rule on time given a step without a
  // time, or one that judges a run's first step only given a later one): the caller does not
  // count it as evaluated, so a series none of whose values could be judged claims nothing
  // (NotApplicable, Error), never NoIssuesFound.
  bool take_unjudged() { return std::exchange(unjudged_, false); }

 protected:
  // For add(): the condition last fired for has cleared at this value.
  void mark_cleared() { cleared_ = true; }
  // For add(): this value was not judged.
  void mark_unjudged() { unjudged_ = true; }

 private:
  bool cleared_ = false;
  bool unjudged_ = false;
};

// A configured series rule: which series it watches and a fresh state for each. Immutable once
// built: states of many series may be made and fed from many threads at once.
class SeriesRule {
 public:
  virtual ~SeriesRule() = default;
  virtual std::string_view name() const = 0;
  virtual bool watches(const SeriesInfo& series) const = 0;
  virtual std::unique_ptr<SeriesState> start(const SeriesInfo& series) const = 0;
  // How many of a series' latest values rebuild its state after a restart.
  virtual std::size_t memory_points() const = 0;
  // What the rule looks for, for the status of a rule that found none: "loss series (tags
  // matching ...)".
  virtual std::string looks_for() const = 0;
  // The user's tag_regex patterns, for a caller that must list candidates by name (an smdebug
  // trial's tensors); empty when the rule watches by role.
  virtual std::vector<std::string> tag_regexes() const = 0;

  // True when the rule's states say when the condition they fired for clears
  // (SeriesState::take_cleared): its incidents resolve then, not after a quiet span.
  virtual bool clears_itself() const { return false; }

  // True when the configuration asks that training be stopped when the rule fires
  // (StalledTrainingRule's stop_training_on_fire): the pipeline then needs a stop action.
  virtual bool stops_training_on_fire() const { return false; }

  // Rules about silence (StalledTrainingRule): how long a watched logdir may go without a new
  // step before silence() is asked for a finding; nullopt (the default): never.
  virtual std::optional<std::chrono::seconds> silence_threshold() const { return std::nullopt; }
  // The finding for `seconds` without a new step since `last_step` (nullopt: none yet), in the
  // logdir `where`. Called by a watch, once per silence, from one thread. A finding without a
  // message: the rule has nothing to say about this silence (MaxInitializationTime, once a step
  // has come).
  virtual Finding silence(std::optional<std::int64_t> last_step, double seconds,
                          const std::string& where) const {
    static_cast<void>(last_step);
    static_cast<void>(seconds);
    static_cast<void>(where);
    return {};
  }
};

// Which series a rule watches: those of a role, or, when the user gives `tag_regex`, those whose
// tag one of the regexes finds (any role).
class SeriesSelection {
 public:
  // `role`: the default; nullopt watches every series.
  explicit SeriesSelection(std::optional<SeriesRole> role) : role_(role) {}

  // Reads `tag_regex` (regexes in Python's syntax, each checked to compile).
  static SeriesSelection read(ParameterReader& reader, std::optional<SeriesRole> role);
  // The series of `role` (when set) and those whose tag one of `regexes` finds: smdebug's
  // "the losses collection and tensor_regex" for rules that take both.
  static SeriesSelection either(std::optional<SeriesRole> role, std::vector<NameRegex> regexes);
  static ParameterSpec parameter(std::optional<SeriesRole> role);

  bool watches(const SeriesInfo& series) const;
  std::string describe() const;
  std::vector<std::string> patterns() const;

 private:
  std::optional<SeriesRole> role_;
  std::vector<NameRegex> regexes_;
  bool role_too_ = false;  // with regexes: the role's series as well
  bool nothing_ = false;   // `either` with neither: watches no series
};

// A series rule over the scalar series a SeriesSelection chooses (its role, or the user's
// tag_regex), configured by `Options`: what the judging rules (Divergence, GradientExplosion,
// GradientVanishing) share, so that each says only how it judges.
template <typename Options>
class SelectedSeriesRule : public SeriesRule {
 public:
  SelectedSeriesRule(SeriesSelection selection, Options options)
      : selection_(std::move(selection)), options_(options) {}

  bool watches(const SeriesInfo& series) const override {
    return series.figure.empty() && selection_.watches(series);
  }
  std::string looks_for() const override { return selection_.describe(); }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }
  const Options& options() const { return options_; }

 protected:
  SeriesSelection selection_;
  Options options_;
};

}  // namespace rulestream
