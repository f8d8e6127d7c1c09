#pragma once

// What a TensorBoard tag measures and in which mode, from the names people use, so that rules
// find their inputs with their defaults: `train/loss`, `val_loss`, `epoch_loss` in Keras'
// `validation` run, `Loss/test`, `train/grad_norm`, `lr`. docs/tensorboard.md lists the
// patterns; a rules file may replace any of them.

#include <optional>
#include <string>
#include <vector>

#include "core/model/name_regex.hpp"
#include "core/model/scalar_series.hpp"

namespace rulestream {

struct SeriesNaming {
  // Roles, tried in this order, each a list of regexes searched in the tag (Python syntax).
  std::vector<NameRegex> gradient_norm;
  std::vector<NameRegex> loss;
  std::vector<NameRegex> learning_rate;
  // A histogram tag these find is a gradient's (role Gradient); other histograms are Other.
  std::vector<NameRegex> gradient;
  // What a reinforcement-learning job logs and no other does (episode returns and lengths, value
  // and policy losses, PPO's approx_kl and clip_fraction): a run with such a tag is an RL job,
  // and its losses have the role ReinforcementLoss, not Loss.
  std::vector<NameRegex> reinforcement;
  // Modes: searched in the tag, then in the run's last folder (Keras' `train`, `validation`).
  std::vector<NameRegex> train;
  std::vector<NameRegex> eval;

  static SeriesNaming defaults();

  // The names a rules file may replace: "loss", "gradient_norm", "learning_rate", "gradient",
  // "reinforcement", "train", "eval".
  static const std::vector<std::string>& keys();
  // Replaces the patterns of `key` (Python regexes, searched). std::invalid_argument naming the
  // key for one not in keys(), RegexError for a pattern that does not compile.
  void replace(const std::string& key, const std::vector<std::string>& patterns);

  // The series of `tag` in `run`: its role (Other when no pattern finds it) and mode (GLOBAL
  // when neither the tag nor the run says). `reinforcement_run`: the run has a tag that
  // names_reinforcement (its losses are ReinforcementLoss; a loss whose own name says so is,
  // whatever the run).
  SeriesInfo describe(const std::string& run, const std::string& tag,
                      bool reinforcement_run = false) const;
  // Whether `tag` is what only a reinforcement-learning job logs (`reinforcement`).
  bool names_reinforcement(const std::string& tag) const;
  // The job of a run: its parent when the run's own folder is a mode's (Keras' "train" and
  // "validation" runs belong to one job), else the run itself.
  std::string job_of(const std::string& run) const;
  // The mode a run's own folder names (Keras' "train", "validation"), if any.
  std::optional<Mode> mode_of_run(const std::string& run) const;

  // The series of `figure` ("abs_mean", ...) of the histogram tag `tag` in `run`.
  SeriesInfo describe_histogram(const std::string& run, const std::string& tag,
                                const std::string& figure) const;

  // Reinforcement learning and the modes are judged per run: SB3's `train/loss` is an RL loss
  // because `rollout/ep_rew_mean` is in its run. A run is marked by the first such tag it shows;
  // a loss whose series began before it keeps its role (an RL job logs its returns first: SB3
  // from its first rollout, CleanRL with every episode).
};

}  // namespace rulestream
