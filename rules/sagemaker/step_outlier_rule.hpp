#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/mode.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

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

  static RuleSpec spec();

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

}  // namespace rulestream
