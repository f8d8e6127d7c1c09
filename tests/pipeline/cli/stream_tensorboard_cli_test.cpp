// `rulestream replay` of a TensorBoard logdir through the CLI: exit statuses, the report on
// stderr, events on stdout.
#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/cli/cli.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

testing::CliOutcome replay(std::vector<std::string> args) {
  return testing::run_cli("replay", std::move(args));
}

// train/loss at steps 0..29, NaN at step 25 when `with_nan`.
void write_run(const std::filesystem::path& logdir, bool with_nan) {
  TensorBoardWriter writer(logdir / "events.out.tfevents.1.host");
  for (int step = 0; step < 30; ++step) {
    writer.add_scalar("train/loss", step, with_nan && step == 25 ? std::nanf("") : 1.0F, step);
  }
}

TEST(StreamTensorBoardCli, ARuleThatFiresExitsOneAndPrintsItsEvent) {
  TempDir dir;
  write_run(dir.path(), true);
  const auto outcome = replay({dir.path().string(), "--rule", "NonFinite", "--format", "json"});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  EXPECT_NE(outcome.out.find("\"global_step\": 25"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("\"status\": \"IssuesFound\""), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.err.find("1 runs, 1 event files"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("30 values"), std::string::npos) << outcome.err;
}

TEST(StreamTensorBoardCli, AHealthyRunExitsZero) {
  TempDir dir;
  write_run(dir.path(), false);
  const auto outcome = replay({dir.path().string(), "--rule", "NonFinite", "--rule", "LossSpike"});
  EXPECT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  EXPECT_NE(outcome.err.find("NonFinite (NonFinite): NoIssuesFound"), std::string::npos)
      << outcome.err;
}

TEST(StreamTensorBoardCli, ARuleThatCannotRunOnALogdirExitsTwo) {
  TempDir dir;
  write_run(dir.path(), false);
  const auto outcome =
      replay({dir.path().string(), "--rule", "NonFinite", "--rule", "VanishingGradient"});
  EXPECT_EQ(outcome.exit_code, cli::kExitError) << outcome.err;
  EXPECT_NE(outcome.err.find("VanishingGradient (VanishingGradient): Error"), std::string::npos)
      << outcome.err;
}

TEST(StreamTensorBoardCli, StopActionsAreRefusedOnALogdir) {
  TempDir dir;
  write_run(dir.path(), false);
  testing::write_text_file(dir.path() / "rules.json", R"({"rules": [{
    "RuleConfigurationName": "nan", "RuleParameters": {"rule_to_invoke": "NonFinite"},
    "Actions": [{"type": "stop", "command": "true"}]}]})");
  const auto outcome =
      replay({dir.path().string(), "--rules", (dir.path() / "rules.json").string()});
  EXPECT_EQ(outcome.exit_code, cli::kExitError);
  EXPECT_NE(outcome.err.find("stop actions do not run on TensorBoard logdirs"), std::string::npos)
      << outcome.err;
}

}  // namespace
}  // namespace rulestream
