// `rulestream replay` of a TensorBoard logdir through the CLI: exit statuses, the report on
// stderr, events on stdout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "apps/cli/cli.hpp"
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

TEST(StreamTensorBoardCli, ALogdirWithNoRuleNamedIsJudgedByTheDefaultSet) {
  TempDir dir;
  write_run(dir.path(), true);
  const auto fired = replay({dir.path().string()});
  EXPECT_EQ(fired.exit_code, cli::kExitRuleFired) << fired.err;
  EXPECT_NE(fired.err.find("NonFinite (NonFinite): IssuesFound"), std::string::npos) << fired.err;
  // The run logs no gradient norm: those rules claim nothing, and fail nothing.
  EXPECT_NE(fired.err.find("GradientExplosion (GradientExplosion): NotApplicable"),
            std::string::npos)
      << fired.err;
  EXPECT_NE(fired.err.find("Divergence (Divergence): NoIssuesFound"), std::string::npos)
      << fired.err;

  TempDir healthy;
  write_run(healthy.path(), false);
  const auto quiet = replay({healthy.path().string(), "--format", "json"});
  EXPECT_EQ(quiet.exit_code, cli::kExitOk) << quiet.err;
  EXPECT_NE(quiet.out.find("\"status\": \"NotApplicable\""), std::string::npos) << quiet.out;
  // Named explicitly, a rule with nothing to judge is an error, as before.
  EXPECT_EQ(replay({healthy.path().string(), "--rule", "GradientExplosion"}).exit_code,
            cli::kExitError);
  // "defaults" names the set beside other rules.
  const auto both = replay({healthy.path().string(), "--rule", "defaults", "--rule", "LossSpike"});
  EXPECT_NE(both.err.find("Plateau (Plateau)"), std::string::npos) << both.err;
  EXPECT_NE(both.err.find("LossSpike (LossSpike)"), std::string::npos) << both.err;
}

TEST(StreamTensorBoardCli, ARulesFileStopActionRunsWhenTheRuleFires) {
  TempDir logdir;
  write_run(logdir.path(), true);  // NaN at step 25
  TempDir work;
  const auto marker = work.path() / "stopped";
  testing::write_text_file(work.path() / "rules.json", R"({"rules": [{
    "RuleConfigurationName": "nan", "RuleParameters": {"rule_to_invoke": "NonFinite"},
    "Actions": [{"type": "stop", "command": "echo $RULESTREAM_STEP > ')" +
                                                           marker.string() + R"('"}]}]})");
  const auto outcome =
      replay({logdir.path().string(), "--rules", (work.path() / "rules.json").string()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  EXPECT_EQ(testing::read_text_file(marker), "25\n");
  EXPECT_NE(outcome.err.find("nan (NonFinite): IssuesFound, fired 1 times in 30 values evaluated "
                             "- ran `echo"),
            std::string::npos)
      << outcome.err;
}

// A reader that goes away (`| head -1`) does not kill the replay: SIGPIPE is ignored, stdout's
// closing is said once, and the file sink still gets every event. Before, the process died of
// SIGPIPE (status 141) with most events unwritten.
TEST(StreamTensorBoardCli, AClosedStdoutLosesNoEventOfTheOtherSinks) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "logdir" / "events.out.tfevents.1.host");
    for (int tag = 0; tag < 200; ++tag) {  // one NonFinite event each
      writer.add_scalar("metric_" + std::to_string(tag), 0, std::nanf(""), 1.0);
    }
  }
  const auto events = dir.path() / "events.jsonl";
  const std::string command = "bash -c \"'" + testing::rulestream_binary().string() + "' replay '" +
                              (dir.path() / "logdir").string() +
                              "' --rule NonFinite --sink stdout --sink file:'" + events.string() +
                              "' 2>'" + (dir.path() / "err.txt").string() +
                              "' | head -1 >/dev/null; exit \\${PIPESTATUS[0]}\"";
  const testing::CommandResult result = testing::run_command(command);
  EXPECT_EQ(result.exit_code, cli::kExitRuleFired) << command;
  // 200 firings, each incident's resolution when the job ended (200), and NonFinite's status.
  const std::string written = testing::read_text_file(events);
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 401);
  EXPECT_NE(testing::read_text_file(dir.path() / "err.txt").find("stdout was closed by its reader"),
            std::string::npos);
}

}  // namespace
}  // namespace rulestream
