#include "stages/series/series_naming.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace rulestream {
namespace {

// Tags as real writers name them (../shared/tensorboard-samples and the frameworks' docs).
TEST(SeriesNamingTest, RolesAndModesFromTheNamesPeopleUse) {
  const SeriesNaming naming = SeriesNaming::defaults();
  const std::vector<std::tuple<std::string, std::string, SeriesRole, Mode>> cases{
      {"runs/Mar24", "train/loss", SeriesRole::Loss, Mode::Train},  // HF Trainer
      {"runs/Mar24", "eval/loss", SeriesRole::Loss, Mode::Eval},    // HF Trainer
      {"runs/Mar24", "train/grad_norm", SeriesRole::GradientNorm, Mode::Train},
      {"runs/Mar24", "train/learning_rate", SeriesRole::LearningRate, Mode::Train},
      {"exp/train", "epoch_loss", SeriesRole::Loss, Mode::Train},      // Keras
      {"exp/validation", "epoch_loss", SeriesRole::Loss, Mode::Eval},  // Keras
      {"exp/validation", "evaluation_loss_vs_iterations", SeriesRole::Loss, Mode::Eval},
      {".", "Loss/train", SeriesRole::Loss, Mode::Train},  // PyTorch tutorial
      {".", "Loss/test", SeriesRole::Loss, Mode::Eval},
      {".", "val_loss", SeriesRole::Loss, Mode::Eval},  // Lightning
      {".", "train_loss", SeriesRole::Loss, Mode::Train},
      {"seed_5/PPO_1", "train/entropy_loss", SeriesRole::Loss, Mode::Train},  // sb3
      {"seed_5/PPO_1", "rollout/ep_rew_mean", SeriesRole::Other, Mode::Global},
      {".", "grad-norm", SeriesRole::GradientNorm, Mode::Global},  // Megatron
      {".", "lr", SeriesRole::LearningRate, Mode::Global},
      {".", "loss-scale", SeriesRole::Other, Mode::Global},  // mixed precision: not a loss
      {".", "lossy_ratio", SeriesRole::Other, Mode::Global},
      {".", "interval_s", SeriesRole::Other, Mode::Global},  // "val" inside a word: no mode
      {"cnn_melspec_log", "train/0th", SeriesRole::Other, Mode::Train},
  };
  for (const auto& [run, tag, role, mode] : cases) {
    const SeriesInfo info = naming.describe(run, tag);
    EXPECT_EQ(series_role_name(info.role), series_role_name(role)) << run << " " << tag;
    EXPECT_EQ(mode_name(info.mode), mode_name(mode)) << run << " " << tag;
    EXPECT_EQ(info.run, run);
    EXPECT_EQ(info.tag, tag);
  }
}

TEST(SeriesNamingTest, LightningsTotalGradientNormIsAGradientNorm) {
  const SeriesNaming naming = SeriesNaming::defaults();
  EXPECT_EQ(naming.describe(".", "grad_2.0_norm_total").role, SeriesRole::GradientNorm);
  EXPECT_EQ(naming.describe(".", "grad_2_norm_total").role, SeriesRole::GradientNorm);
  // Its per-parameter norms are not the model's.
  EXPECT_EQ(naming.describe(".", "grad_2.0_norm/layer.0.weight").role, SeriesRole::Other);
  EXPECT_EQ(naming.describe(".", "train/grad_norm").role, SeriesRole::GradientNorm);
}

// What only a reinforcement-learning job logs marks its run; the losses of a marked run (SB3's
// train/loss) are RL losses, as is a loss whose own name says so, whatever the run. Supervised
// names that contain a marker's letters are not markers.
TEST(SeriesNamingTest, ReinforcementLearningRunsAreToldApartByWhatTheyLog) {
  const SeriesNaming naming = SeriesNaming::defaults();
  for (const std::string tag :
       {"rollout/ep_rew_mean", "rollout/ep_len_mean", "charts/episodic_return",
        "episode_reward_mean", "train/policy_gradient_loss", "losses/value_loss",
        "info/learner/default_policy/learner_stats/vf_loss", "losses/qf1_loss", "train/actor_loss",
        "train/critic_loss", "train/approx_kl", "train/clip_fraction",
        "train/explained_variance"}) {
    EXPECT_TRUE(naming.names_reinforcement(tag)) << tag;
  }
  for (const std::string tag : {"train/loss", "val_loss", "seq_loss", "step_len", "deep_return",
                                "train/epoch", "eval/accuracy", "Loss/test", "epoch_loss"}) {
    EXPECT_FALSE(naming.names_reinforcement(tag)) << tag;
  }
  EXPECT_EQ(naming.describe("PPO_1", "train/loss", true).role, SeriesRole::ReinforcementLoss);
  EXPECT_EQ(naming.describe("PPO_1", "train/loss", false).role, SeriesRole::Loss);
  EXPECT_EQ(naming.describe(".", "losses/value_loss").role, SeriesRole::ReinforcementLoss);
  EXPECT_EQ(naming.describe(".", "losses/value_loss").mode, Mode::Train);
  // What is not a loss keeps its role in an RL run.
  EXPECT_EQ(naming.describe("PPO_1", "train/learning_rate", true).role, SeriesRole::LearningRate);
  EXPECT_EQ(naming.describe("PPO_1", "rollout/ep_rew_mean", true).role, SeriesRole::Other);
  EXPECT_EQ(series_role_name(SeriesRole::ReinforcementLoss), "reinforcement_loss");
  EXPECT_EQ(series_role_from_name("reinforcement_loss"), SeriesRole::ReinforcementLoss);
}

TEST(SeriesNamingTest, PatternsCanBeReplaced) {
  SeriesNaming naming = SeriesNaming::defaults();
  naming.loss = compile_name_regexes({"^objective$"});
  EXPECT_EQ(naming.describe(".", "objective").role, SeriesRole::Loss);
  EXPECT_EQ(naming.describe(".", "train/loss").role, SeriesRole::Other);
  naming.replace("reinforcement", {"^reward$"});
  EXPECT_TRUE(naming.names_reinforcement("reward"));
  EXPECT_FALSE(naming.names_reinforcement("rollout/ep_rew_mean"));
}

TEST(SeriesNamingTest, ALossesTrainingAndValidationSeriesShareAGroup) {
  const SeriesNaming naming = SeriesNaming::defaults();
  const auto group = [&](const std::string& run, const std::string& tag) {
    return naming.describe(run, tag).group;
  };
  EXPECT_EQ(group("runs/x", "train/loss"), group("runs/x", "eval/loss"));              // HF
  EXPECT_EQ(group("exp/train", "epoch_loss"), group("exp/validation", "epoch_loss"));  // Keras
  EXPECT_EQ(group(".", "train_loss"), group(".", "val_loss"));                         // Lightning
  // Lightning's per-step and per-epoch forms of one metric pair with its validation twin.
  EXPECT_EQ(group(".", "train_loss_epoch"), group(".", "val_loss"));
  EXPECT_EQ(group(".", "train_loss_step"), group(".", "val_loss"));
  EXPECT_NE(group(".", "train_loss_epoch"), group(".", "val_acc"));
  EXPECT_EQ(group(".", "Loss/train"), group(".", "Loss/test"));  // PyTorch
  EXPECT_NE(group("runs/x", "train/loss"), group("runs/y", "eval/loss"));
  EXPECT_NE(group(".", "train/loss"), group(".", "eval/accuracy"));
  // A loss named for no mode is the training loss: Keras' and Hugging Face's `loss` pair with
  // `val_loss` and `eval_loss`, also in a run named for training (Keras' training_log.csv).
  EXPECT_EQ(naming.describe(".", "loss").mode, Mode::Train);
  EXPECT_EQ(group(".", "loss"), group(".", "val_loss"));
  EXPECT_EQ(group("trainer_state.json", "loss"), group("trainer_state.json", "eval_loss"));
  EXPECT_EQ(group("training_log.csv", "loss"), group("training_log.csv", "val_loss"));
  // Anything else named for no mode has nothing to pair with.
  EXPECT_EQ(naming.describe(".", "accuracy").mode, Mode::Global);
  EXPECT_EQ(group(".", "accuracy"), "");
  EXPECT_EQ(naming.job_of("exp/validation"), "exp");
  EXPECT_EQ(naming.job_of("train"), ".");
  EXPECT_EQ(naming.job_of("runs/x"), "runs/x");
}

}  // namespace
}  // namespace rulestream
