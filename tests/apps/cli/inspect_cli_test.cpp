// `rulestream inspect`: the human summary, the JSON documents and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <sstream>

#include "apps/cli/cli.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

testing::CliOutcome inspect(std::vector<std::string> args) {
  return testing::run_cli("inspect", std::move(args));
}

void expect_one_line_error(const testing::CliOutcome& outcome, const std::string& fragment) {
  testing::expect_one_line_error(outcome, "inspect", {fragment});
}

// Two workers, a TRAIN and an EVAL step, a tensor with NaN, one saved only as reductions.
void write_trial(const std::filesystem::path& root) {
  for (const std::string worker : {"worker_0", "worker_1"}) {
    TrialWriter writer({.root = root, .worker = worker});
    const float offset = worker == "worker_0" ? 0.0f : 10.0f;
    writer.begin_step(0, Mode::Train, 0);
    writer.add_tensor("loss_output_0", TensorValue::from_values(DType::Float32, {},
                                                                std::vector<float>{2.0f + offset}));
    writer.add_tensor("w", TensorValue::from_values(DType::Float32, {2},
                                                    std::vector<float>{-1.0f, 3.0f + offset}));
    writer.add_reduction("r", {Reduction::Max, false},
                         TensorValue::from_values(DType::Float32, {}, std::vector<float>{4.0f}));
    writer.end_step();
    writer.begin_step(1, Mode::Eval, 0);
    writer.add_tensor("w", TensorValue::from_values(DType::Float32, {2},
                                                    std::vector<float>{std::nanf(""), 1.0f}));
    writer.end_step();
    CollectionsFile collections;
    Collection losses;
    losses.name = "losses";
    losses.include_regex = {"loss"};
    collections.collections["losses"] = losses;
    collections.num_workers = 2;
    writer.write_collections(collections);
  }
  TrialWriter({.root = root}).write_end_marker();
}

TEST(InspectCli, SummaryJsonHasTheDocumentedKeys) {
  TempDir dir;
  write_trial(dir.path());
  const auto outcome = inspect({dir.path().string(), "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto document = boost::json::parse(outcome.out).as_object();
  EXPECT_EQ(document.at("tensors"), boost::json::parse(R"(["loss_output_0", "r", "w"])"));
  EXPECT_EQ(document.at("steps"), boost::json::parse("[0, 1]"));
  EXPECT_EQ(document.at("modes"), boost::json::parse(R"(["TRAIN", "EVAL"])"));
  EXPECT_EQ(document.at("workers"), boost::json::parse(R"(["worker_0", "worker_1"])"));
  EXPECT_EQ(document.at("collections"), boost::json::parse(R"({"losses": ["loss_output_0"]})"));
  EXPECT_EQ(document.at("ended"), true);
}

// smdebug's XGBoost hook writes a collection whose regex uses a lookbehind (Python syntax):
// such a trial inspects like any other. A regex no syntax accepts is a problem the summary
// names, with its file, and its collection keeps its listed names; it never stops inspect.
TEST(InspectCli, ATrialWithPythonRegexesInItsCollectionsIsInspected) {
  TempDir dir;
  TrialWriter writer({.root = dir.path(), .worker = "worker_0"});
  writer.begin_step(0, Mode::Train, 0);
  for (const std::string name : {"train-rmse", "train-auc", "validation-map", "f0"}) {
    writer.add_tensor(name, TensorValue::from_values(DType::Float32, {}, std::vector<float>{1}));
  }
  writer.end_step();
  CollectionsFile collections;
  Collection metrics;
  metrics.name = "metrics";
  metrics.include_regex = {"^[a-zA-z]+-.+(?<!(auc|map))$"};
  collections.collections["metrics"] = metrics;
  Collection broken;
  broken.name = "broken";
  broken.include_regex = {"(?<!a+)b"};
  broken.tensor_names = {"f0"};
  collections.collections["broken"] = broken;
  writer.write_collections(collections);
  TrialWriter({.root = dir.path()}).write_end_marker();

  const auto outcome = inspect({dir.path().string(), "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto document = boost::json::parse(outcome.out).as_object();
  EXPECT_EQ(document.at("collections"),
            boost::json::parse(R"({"broken": ["f0"], "metrics": ["train-rmse"]})"));
  const auto& problems = document.at("problems").as_array();
  ASSERT_EQ(problems.size(), 1u);
  const std::string problem(problems[0].as_string());
  EXPECT_NE(problem.find("worker_0_collections.json: collection 'broken'"), std::string::npos)
      << problem;
}

TEST(InspectCli, TensorJsonReportsEveryStepAndWorker) {
  TempDir dir;
  write_trial(dir.path());
  const auto outcome = inspect({dir.path().string(), "--tensor", "w", "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto steps = boost::json::parse(outcome.out).as_object().at("steps").as_array();
  ASSERT_EQ(steps.size(), 4u);
  const auto& first = steps[0].as_object();
  EXPECT_EQ(first.at("step"), 0);
  EXPECT_EQ(first.at("mode"), "TRAIN");
  EXPECT_EQ(first.at("mode_step"), 0);
  EXPECT_EQ(first.at("worker"), "worker_0");
  EXPECT_EQ(first.at("dtype"), "float32");
  EXPECT_EQ(first.at("shape"), boost::json::parse("[2]"));
  const auto& reductions = first.at("reductions").as_object();
  for (const char* key :
       {"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2", "abs_min", "abs_max",
        "abs_mean", "abs_prod", "abs_std", "abs_variance", "abs_sum", "abs_l1", "abs_l2"}) {
    EXPECT_TRUE(reductions.contains(key)) << key;
  }
  EXPECT_EQ(reductions.at("min").to_number<double>(), -1.0);
  EXPECT_EQ(reductions.at("sum").to_number<double>(), 2.0);
  EXPECT_EQ(reductions.at("abs_sum").to_number<double>(), 4.0);
  EXPECT_EQ(steps[1].as_object().at("worker"), "worker_1");
  EXPECT_EQ(steps[1].as_object().at("reductions").as_object().at("max").to_number<double>(), 13.0);
  // NaN is written as a string, never as invalid JSON.
  const auto& eval = steps[2].as_object();
  EXPECT_EQ(eval.at("mode"), "EVAL");
  EXPECT_EQ(eval.at("reductions").as_object().at("mean"), "NaN");
}

TEST(InspectCli, ReductionsThatCannotBeHadAreAbsent) {
  TempDir dir;
  write_trial(dir.path());
  const auto outcome = inspect({dir.path().string(), "--tensor", "r", "--json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto steps = boost::json::parse(outcome.out).as_object().at("steps").as_array();
  ASSERT_EQ(steps.size(), 2u);
  const auto& reductions = steps[0].as_object().at("reductions").as_object();
  EXPECT_EQ(reductions.size(), 1u);
  EXPECT_EQ(reductions.at("max").to_number<double>(), 4.0);
  EXPECT_FALSE(steps[0].as_object().contains("shape"));
}

TEST(InspectCli, HumanSummaryNamesWhatIsThere) {
  TempDir dir;
  write_trial(dir.path());
  const auto outcome = inspect({dir.path().string()});
  ASSERT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  for (const char* text :
       {"ended", "worker_0 worker_1", "TRAIN 1", "EVAL 1", "loss_output_0", "losses"}) {
    EXPECT_NE(outcome.out.find(text), std::string::npos) << text << "\n" << outcome.out;
  }
}

TEST(InspectCli, ErrorsAreOneClearLine) {
  TempDir dir;
  expect_one_line_error(inspect({(dir.path() / "absent").string()}), "no such trial folder");
  expect_one_line_error(inspect({dir.path().string()}), "not an smdebug trial");
  write_trial(dir.path() / "job");
  expect_one_line_error(inspect({(dir.path() / "job").string(), "--tensor", "nope"}),
                        "tensor 'nope'");
  expect_one_line_error(inspect({}), "missing PATH");
  expect_one_line_error(inspect({(dir.path() / "job").string(), "--bogus"}), "bogus");
}

TEST(InspectCli, TheBinaryExitsNonZeroOnErrors) {
  const auto result =
      testing::run_command(testing::rulestream_binary().string() + " inspect /nonexistent/trial");
  EXPECT_EQ(result.exit_code, cli::kExitError);
  EXPECT_NE(result.err.find("/nonexistent/trial"), std::string::npos);
}

}  // namespace
}  // namespace rulestream
