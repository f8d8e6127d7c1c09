#pragma once

// A series of scalars as series rules see it (rules/series/): a TensorBoard tag of one run, or
// an smdebug scalar tensor. Its role and mode say what it measures, so that rules find their
// inputs with their defaults: a loss spike rule watches losses, a gradient-norm rule gradient
// norms, whatever the framework called them (docs/tensorboard.md gives the mapping).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/mode.hpp"

namespace rulestream {

// Gradient: a gradient's histogram (its figures are series: abs_mean, variance, sum).
// ReinforcementLoss: a loss of a reinforcement-learning job (a value, policy or total loss beside
// episode returns), which no rule judges as a loss that should fall: a value loss grows with the
// returns and a policy loss changes sign (stages/series/series_naming.hpp says which jobs).
enum class SeriesRole : std::uint8_t {
  Loss,
  GradientNorm,
  LearningRate,
  Gradient,
  ReinforcementLoss,
  Other
};

// "loss", "gradient_norm", "learning_rate", "gradient", "reinforcement_loss", "other".
std::string_view series_role_name(SeriesRole role);
std::optional<SeriesRole> series_role_from_name(std::string_view name);

struct SeriesInfo {
  std::string run;  // the TensorBoard run ("." for the logdir itself); empty for smdebug
  std::string tag;  // the tag, or the smdebug tensor's name
  Mode mode = Mode::Global;
  SeriesRole role = SeriesRole::Other;
  // A figure of a histogram tag ("abs_mean", "variance", "sum"); empty for a scalar tag.
  std::string figure;
  // Series that measure the same thing in different modes share a group (a loss's training and
  // validation series: "train/loss" and "eval/loss" of a run, Keras' "epoch_loss" of the runs
  // "train" and "validation" of one job): what Overfit pairs. Empty where there is none.
  std::string group;
  // For the "wall_time" figure (the wall time of each new step): when the run started, in the
  // same clock as its values, where the files say (a TensorBoard run's first record, a metrics
  // file's elapsed-time column, which starts at 0); nullopt where they do not. What
  // MaxInitializationTime measures the first step against.
  std::optional<double> run_started;

  // How events name it: the tag, prefixed with its run unless the run is the logdir itself,
  // and the figure of a histogram ("validation: epoch_loss", "grad/fc1 (abs_mean)").
  std::string display_name() const;
};

}  // namespace rulestream
