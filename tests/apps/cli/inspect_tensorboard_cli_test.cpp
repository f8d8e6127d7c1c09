// `rulestream inspect` of a TensorBoard logdir: the JSON contract (docs/tensorboard.md), the
// human summary and the errors, on a logdir written here with values known by hand.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <vector>

#include "apps/cli/cli.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

testing::CliOutcome inspect(std::vector<std::string> args) {
  return testing::run_cli("inspect", std::move(args));
}

// Run ".": loss at steps 0, 1, 2 (3, 2, NaN), then a restart at step 1 (5). Run "val": loss
// written the TF2 way at steps 0 and 10 (1.5, 0.25), and a histogram of {1, 2, 3} at step 0.
void write_logdir(const std::filesystem::path& root) {
  TensorBoardWriter train(root / "events.out.tfevents.100.host");
  train.add_scalar("loss", 0, 3.0F, 100.5);
  train.add_scalar("loss", 1, 2.0F, 101.5);
  train.add_scalar("loss", 2, std::nanf(""), 102.5);
  train.add_scalar("loss", 1, 5.0F, 103.5);
  TensorBoardWriter val(root / "val" / "events.out.tfevents.100.host",
                        {.scalars = TensorBoardWriter::ScalarStyle::Tensor});
  val.add_scalar("loss", 0, 1.5F, 200.0);
  val.add_scalar("loss", 10, 0.25F, 210.0);
  const std::vector<float> weights{1.0F, 2.0F, 3.0F};
  val.add_histogram("w", 0, weights, 201.0);
}

TEST(InspectTensorBoardCli, SummaryJsonCountsEveryValueInFileOrder) {
  TempDir dir;
  write_logdir(dir.path());
  const auto outcome = inspect({dir.path().string(), "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto document = boost::json::parse(outcome.out).as_object();
  EXPECT_EQ(document.at("format"), "tensorboard");
  EXPECT_EQ(document.at("runs"), boost::json::parse(R"({
    ".": {"tags": {"loss": {"kind": "scalar", "count": 4, "first_step": 0, "last_step": 1}}},
    "val": {"tags": {
      "loss": {"kind": "scalar", "count": 2, "first_step": 0, "last_step": 10},
      "w": {"kind": "histogram", "count": 1, "first_step": 0, "last_step": 0}}}})"));
  EXPECT_EQ(document.at("problems"), boost::json::array());
}

// A run folder whose name is not UTF-8 (a Latin-1 byte) is a run like any other: the document
// stays JSON and names it as Python's json.dumps names what os.listdir gave it ("\udcff").
TEST(InspectTensorBoardCli, ARunNamedWithAStrayByteKeepsTheDocumentJson) {
  TempDir dir;
  {
    TensorBoardWriter odd(dir.path() / "bad-utf8-\xff" / "events.out.tfevents.1.host");
    odd.add_scalar("loss", 0, 1.0F, 1.0);
    TensorBoardWriter fine(dir.path() / "fine" / "events.out.tfevents.1.host");
    fine.add_scalar("loss", 0, 1.0F, 1.0);
  }
  const auto outcome = inspect({dir.path().string(), "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  // (Boost.JSON 1.81 refuses a lone surrogate escape, which JSON allows: read it as text.)
  EXPECT_NE(outcome.out.find(R"("bad-utf8-\udcff": {"tags": {"loss": {"kind": "scalar")"),
            std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.out.find(R"("fine": {"tags": {"loss": {"kind": "scalar")"), std::string::npos)
      << outcome.out;
}

TEST(InspectTensorBoardCli, ATagsPointsAreEveryValueWithNaNAsAString) {
  TempDir dir;
  write_logdir(dir.path());
  const auto outcome = inspect({dir.path().string(), "--run", ".", "--tag", "loss", "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  EXPECT_EQ(boost::json::parse(outcome.out).at("points"), boost::json::parse(R"([
    {"step": 0, "wall_time": 100.5, "value": 3.0},
    {"step": 1, "wall_time": 101.5, "value": 2.0},
    {"step": 2, "wall_time": 102.5, "value": "NaN"},
    {"step": 1, "wall_time": 103.5, "value": 5.0}])"));
}

TEST(InspectTensorBoardCli, AHistogramsPointsGiveItsFigures) {
  TempDir dir;
  write_logdir(dir.path());
  const auto outcome = inspect({dir.path().string(), "--tag", "w", "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  // {1, 2, 3}: 3 values, sum 6, sum of squares 14, mean 2.
  EXPECT_EQ(boost::json::parse(outcome.out).at("points"), boost::json::parse(R"([
    {"step": 0, "wall_time": 201.0, "min": 1.0, "max": 3.0, "num": 3.0, "sum": 6.0,
     "sum_squares": 14.0, "mean": 2.0}])"));
}

TEST(InspectTensorBoardCli, TheHumanSummaryNamesRunsTagsAndProblems) {
  TempDir dir;
  write_logdir(dir.path());
  TensorBoardWriter broken(dir.path() / "broken" / "events.out.tfevents.1.host");
  broken.append_raw("WARNING: log text in an event file\n");
  const auto outcome = inspect({dir.path().string()});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  for (const char* text :
       {"(TensorBoard)", "run .: 1 tags", "run val: 2 tags", "histogram", "4 values, steps 0..1",
        "broken/events.out.tfevents.1.host", "length checksum"}) {
    EXPECT_NE(outcome.out.find(text), std::string::npos) << text << "\n" << outcome.out;
  }
}

TEST(InspectTensorBoardCli, ErrorsAreOneClearLine) {
  TempDir dir;
  write_logdir(dir.path() / "logs");
  const std::string logdir = (dir.path() / "logs").string();
  testing::expect_one_line_error(inspect({logdir, "--tag", "loss"}), "inspect",
                                 {"'loss' is in 2 runs", "'.'", "'val'", "--run"});
  testing::expect_one_line_error(inspect({logdir, "--run", "val", "--tag", "nope"}), "inspect",
                                 {"no tag 'nope' in run 'val'"});
  testing::expect_one_line_error(inspect({logdir, "--tensor", "loss"}), "inspect",
                                 {"TensorBoard logdir", "--tag"});
  testing::expect_one_line_error(inspect({logdir, "--run", "val"}), "inspect", {"--tag"});
  std::filesystem::create_directories(dir.path() / "empty");
  testing::expect_one_line_error(inspect({(dir.path() / "empty").string()}), "inspect",
                                 {"not an smdebug trial", "nor a TensorBoard logdir"});
}

}  // namespace
}  // namespace rulestream
