#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "apps/cli/cli.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

testing::CliOutcome simulate(std::vector<std::string> args) {
  return testing::run_cli("simulate", std::move(args));
}

void expect_error(const testing::CliOutcome& outcome, const std::string& fragment) {
  testing::expect_one_line_error(outcome, "simulate", {fragment});
}

TEST(SimulateCliTest, HelpListsScenariosAndOptions) {
  const auto outcome = simulate({"--help"});
  EXPECT_EQ(outcome.exit_code, cli::kExitOk);
  for (const char* text : {"healthy", "vanishing_gradients", "frozen_weights", "--workers",
                           "--reductions-only", "--step-delay-ms", "--compress", "--force"}) {
    EXPECT_NE(outcome.out.find(text), std::string::npos) << text;
  }
}

TEST(SimulateCliTest, WritesTheJobAndSummarisesItInOneLine) {
  TempDir dir;
  const auto out = (dir.path() / "job").string();
  const auto outcome = simulate({out,
                                 "--scenario",
                                 "vanishing_gradients",
                                 "--workers",
                                 "2",
                                 "--steps",
                                 "8",
                                 "--tensor-size",
                                 "16",
                                 "--layers",
                                 "4",
                                 "--extra-tensors",
                                 "2",
                                 "--eval-every",
                                 "4",
                                 "--eval-steps",
                                 "1",
                                 "--save-interval",
                                 "2",
                                 "--fault-step",
                                 "5",
                                 "--seed",
                                 "9"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  EXPECT_TRUE(outcome.err.empty()) << outcome.err;
  EXPECT_EQ(std::count(outcome.out.begin(), outcome.out.end(), '\n'), 1) << outcome.out;
  // 4 layers: 16 parameters and gradients, 6 ReLU tensors, the loss, 2 extra tensors.
  for (const char* text :
       {"vanishing_gradients", "2 workers", "10 steps (8 TRAIN, 2 EVAL; 5 saved)", "25 tensors",
        "bytes of event files", "fault from step 5"}) {
    EXPECT_NE(outcome.out.find(text), std::string::npos) << text << " in " << outcome.out;
  }

  const Trial trial = Trial::open(out);
  EXPECT_EQ(trial.num_workers(), 2);
  EXPECT_EQ(trial.tensor_names().size(), 25u);
  EXPECT_EQ(trial.steps(Mode::Train), (std::vector<std::int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(trial.steps(Mode::Eval), (std::vector<std::int64_t>{0}));
  EXPECT_TRUE(trial.has_training_ended());
  // TRAIN step 6 is global step 7, after the fault.
  EXPECT_EQ(trial.global_step(Mode::Train, 6), 7);
  EXPECT_LT(trial.tensor("gradient/MLP_fc4.weight")
                .reduction_value(6, Reduction::Mean, Mode::Train, std::nullopt, true)
                .as_double(),
            1e-7);
}

TEST(SimulateCliTest, FlagsReachTheJob) {
  TempDir dir;
  const auto out = (dir.path() / "job").string();
  const auto outcome = simulate({out, "--scenario", "healthy", "--steps", "3", "--reductions-only",
                                 "--no-end-marker", "--compress", "gzip", "--step-delay-ms", "1"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  EXPECT_EQ(outcome.out.find("fault"), std::string::npos) << outcome.out;
  const Trial trial = Trial::open(out);
  EXPECT_FALSE(trial.has_training_ended());
  EXPECT_FALSE(trial.collection("weights").reduction_config.save_raw_tensor);
  EXPECT_EQ(trial.tensor("MLP_fc1.weight").shape(2), (Shape{16, 16}));
  EXPECT_EQ(trial.tensor("relu1_output_0").value(2).size(), 256);
  // gzip's magic number starts every event file.
  const auto event = testing::read_text_file(std::filesystem::path(out) / "events" /
                                             "000000000001" / "000000000001_worker_0.tfevents");
  ASSERT_GE(event.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(event[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(event[1]), 0x8b);
}

TEST(SimulateCliTest, BadArgumentsAreOneLineErrors) {
  TempDir dir;
  const auto out = (dir.path() / "job").string();
  expect_error(simulate({}), "missing OUT");
  expect_error(simulate({out}), "missing --scenario");
  expect_error(simulate({out, "--scenario", "melting"}), "unknown scenario 'melting'");
  expect_error(simulate({out, "--scenario", "healthy", "--workers", "0"}), "--workers");
  expect_error(simulate({out, "--scenario", "healthy", "--workers=-3"}), "--workers");
  expect_error(simulate({out, "--scenario", "healthy", "--steps", "ten"}), "--steps: 'ten'");
  expect_error(simulate({out, "--scenario", "healthy", "--seed=-1"}), "--seed");
  expect_error(simulate({out, "--scenario", "healthy", "--layers", "1"}), "--layers");
  expect_error(simulate({out, "--scenario", "exploding", "--steps", "10", "--fault-step", "10"}),
               "fault step 10 is outside the job's global steps 0..9");
  expect_error(simulate({out, "--scenario", "overfit", "--steps", "10"}), "overfit");
  expect_error(simulate({out, "--scenario", "healthy", "--compress", "lz4"}), "--compress");
  expect_error(simulate({out, "--scenario", "healthy", "--bogus"}), "bogus");
  expect_error(simulate({out, "--scenario", "healthy", "--tensor-size", "0"}), "tensor_size");
  // None of the rejected runs wrote anything.
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SimulateCliTest, RefusesANonEmptyFolderWithoutForce) {
  TempDir dir;
  testing::write_text_file(dir.path() / "notes.txt", "keep me");
  const auto out = dir.path().string();
  expect_error(simulate({out, "--scenario", "healthy", "--steps", "2"}), "--force");
  const auto forced = simulate({out, "--scenario", "healthy", "--steps", "2", "--force"});
  EXPECT_EQ(forced.exit_code, cli::kExitOk) << forced.err;
  EXPECT_EQ(testing::read_text_file(dir.path() / "notes.txt"), "keep me");

  testing::write_text_file(dir.path() / "plain-file", "x");
  expect_error(simulate({(dir.path() / "plain-file").string(), "--scenario", "healthy"}),
               "not a folder");
}

TEST(SimulateCliTest, BinaryWritesAJobTheReaderFollows) {
  TempDir dir;
  const auto out = dir.path() / "job";
  const auto result = testing::run_command(
      "'" + testing::rulestream_binary().string() + "' simulate '" + out.string() +
      "' --scenario exploding --steps 10 --fault-step 4 --tensor-size 8");
  ASSERT_EQ(result.exit_code, cli::kExitOk) << result.err;
  EXPECT_NE(result.out.find("simulated exploding job"), std::string::npos) << result.out;
  const Trial trial = Trial::open(out.string());
  const Tensor loss = trial.tensor("CrossEntropyLoss_output_0");
  EXPECT_TRUE(std::isfinite(loss.value(4).as_double(0)));
  EXPECT_TRUE(std::isinf(loss.value(5).as_double(0)));
  EXPECT_TRUE(std::isnan(loss.value(6).as_double(0)));

  const auto failed = testing::run_command("'" + testing::rulestream_binary().string() +
                                           "' simulate '" + out.string() + "' --scenario healthy");
  EXPECT_EQ(failed.exit_code, cli::kExitError);
  EXPECT_NE(failed.err.find("is not empty"), std::string::npos) << failed.err;
}

TEST(SimulateCliTest, WritesATensorBoardLogdir) {
  TempDir dir;
  const auto out = (dir.path() / "logs").string();
  const auto outcome = simulate({out, "--format", "tensorboard", "--scenario", "exploding",
                                 "--steps", "200", "--runs", "2", "--extra-tags", "1"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  // Per run: 200 steps of train/loss, grad_norm, learning_rate and one extra tag; eval/loss at
  // every 10th step.
  EXPECT_NE(outcome.out.find("2 runs, 200 steps, 1640 scalar values"), std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.out.find("fault from step 120"), std::string::npos) << outcome.out;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "logs" / "run_1" /
                                      "events.out.tfevents.1700000000.simulator.1"));
  const auto inspected = testing::run_cli("inspect", {out, "--json"});
  ASSERT_EQ(inspected.exit_code, cli::kExitOk) << inspected.err;
  EXPECT_NE(inspected.out.find("\"metrics/extra_0\""), std::string::npos);
}

TEST(SimulateCliTest, TensorBoardArgumentsAreCheckedAgainstTheFormat) {
  TempDir dir;
  const auto out = (dir.path() / "logs").string();
  expect_error(simulate({out, "--format", "tensorboard", "--scenario", "dead_relu"}),
               "unknown scenario 'dead_relu' for --format tensorboard");
  expect_error(
      simulate({out, "--format", "tensorboard", "--scenario", "healthy", "--workers", "2"}),
      "--workers is for --format smdebug");
  expect_error(simulate({out, "--scenario", "healthy", "--runs", "2"}),
               "--runs is for --format tensorboard");
  expect_error(simulate({out, "--format", "onnx", "--scenario", "healthy"}), "--format: 'onnx'");
}

}  // namespace
}  // namespace rulestream
