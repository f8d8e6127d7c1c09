// Runs examples/hand_built_pipeline.cpp, the pipeline a user composes by hand, so that it never
// rots: it must build, replay a job to the end, name the step where gradients explode and tally
// both of its rules.

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/format/collections_file.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

std::filesystem::path hand_built_pipeline_binary() {
  return testing::rulestream_binary().parent_path() / "examples" / "example_hand_built_pipeline";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The tally table's row for a rule configuration: name, status, fired, evaluated, first step.
std::vector<std::string> table_row(const std::vector<std::string>& lines, const std::string& rule) {
  for (const std::string& line : lines) {
    if (line.starts_with(rule + " ")) return words_of(line);
  }
  return {};
}

std::vector<std::string> lines_with(const std::vector<std::string>& lines,
                                    const std::string& part) {
  std::vector<std::string> found;
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) found.push_back(line);
  }
  return found;
}

// A two-worker job whose gradient is [x, -x] on each worker with x = 1, 1, 1e9 at steps 0..2:
// the combined l2 norm goes 2, 2, 2e9.
void write_spiking_job(const std::filesystem::path& trial) {
  CollectionsFile collections;
  Collection gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  collections.collections["gradients"] = gradients;
  collections.num_workers = 2;
  for (int worker = 0; worker < 2; ++worker) {
    TrialWriter writer({.root = trial, .worker = "worker_" + std::to_string(worker)});
    const std::vector<float> scales = {1.0f, 1.0f, 1e9f};
    for (std::int64_t step = 0; step < 3; ++step) {
      writer.begin_step(step, Mode::Train, step);
      const float x = scales[static_cast<std::size_t>(step)];
      writer.add_tensor("gradient/fc.weight", TensorValue::from_values(DType::Float32, Shape{2},
                                                                       std::vector<float>{x, -x}));
      writer.end_step();
    }
    writer.write_collections(collections);
    if (worker == 0) writer.write_end_marker();
  }
}

class HandBuiltPipelineExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Built with the tests (examples/CMakeLists.txt); absent only when its target was skipped.
    ASSERT_TRUE(std::filesystem::exists(binary_))
        << binary_.string() << " is missing: build the example_hand_built_pipeline target";
  }
  std::string command(const std::string& arguments = "") const {
    return "'" + binary_.string() + "'" + (arguments.empty() ? "" : " " + arguments);
  }
  std::filesystem::path binary_ = hand_built_pipeline_binary();
};

TEST_F(HandBuiltPipelineExampleTest, NamesTheStepWhereTheSimulatedGradientsExplode) {
  const auto result = testing::run_command(command());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("simulated a two-worker exploding training job in "), std::string::npos);

  // The simulated fault: gradients x1e4 at step 20 (a spike of the norm across both workers),
  // infinite at 21; NaN from 22 on compares false and never fires the spike rule.
  const auto spikes = lines_with(lines, "GradientSpike (GradientNormSpike) fired at step");
  ASSERT_EQ(spikes.size(), 2u) << result.out;
  EXPECT_NE(spikes[0].find(" fired at step 20 (TRAIN 20) on simulated-exploding: gradient/MLP_fc"),
            std::string::npos)
      << spikes[0];
  EXPECT_NE(spikes[0].find(" l2 norm across 2 workers grew "), std::string::npos) << spikes[0];
  EXPECT_NE(spikes[0].find(", more than 10x"), std::string::npos) << spikes[0];
  EXPECT_NE(spikes[1].find(" fired at step 21 (TRAIN 21) on simulated-exploding: gradient/MLP_fc"),
            std::string::npos)
      << spikes[1];
  EXPECT_NE(spikes[1].find(" l2 norm across 2 workers became infinite"), std::string::npos)
      << spikes[1];

  // The built-in rule beside it sees the infinities at 21 and the NaNs of 22..39.
  const auto exploding = lines_with(lines, "ExplodingGradients (ExplodingTensor) fired at step");
  ASSERT_EQ(exploding.size(), 19u) << result.out;
  EXPECT_TRUE(lines_with(lines, "ExplodingGradients (ExplodingTensor) fired at step 20 ").empty());

  EXPECT_EQ(table_row(lines, "GradientSpike"),
            (std::vector<std::string>{"GradientSpike", "IssuesFound", "2", "40", "20"}))
      << result.out;
  EXPECT_EQ(table_row(lines, "ExplodingGradients"),
            (std::vector<std::string>{"ExplodingGradients", "IssuesFound", "19", "40", "21"}))
      << result.out;
  EXPECT_NE(result.out.find("40 steps replayed, "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(", 21 conditions met"), std::string::npos) << result.out;
}

TEST_F(HandBuiltPipelineExampleTest, TheGrowthThresholdIsAParameter) {
  testing::TempDir dir;
  const auto trial = dir.path() / "job";
  write_spiking_job(trial);
  const auto fired = testing::run_command(command("'" + trial.string() + "' 1e8"));
  ASSERT_EQ(fired.exit_code, 0) << fired.err;
  const auto lines = lines_of(fired.out);
  const auto spikes = lines_with(lines, "GradientSpike (GradientNormSpike) fired at step");
  ASSERT_EQ(spikes.size(), 1u) << fired.out;
  EXPECT_NE(spikes[0].find(" fired at step 2 (TRAIN 2) on job: gradient/fc.weight l2 norm across "
                           "2 workers grew 1e+09x (2 -> 2e+09), more than 1e+08x"),
            std::string::npos)
      << spikes[0];
  EXPECT_EQ(table_row(lines, "GradientSpike"),
            (std::vector<std::string>{"GradientSpike", "IssuesFound", "1", "3", "2"}))
      << fired.out;

  const auto quiet = testing::run_command(command("'" + trial.string() + "' 1e10"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(table_row(lines_of(quiet.out), "GradientSpike"),
            (std::vector<std::string>{"GradientSpike", "NoIssuesFound", "0", "3", "-"}))
      << quiet.out;
}

TEST_F(HandBuiltPipelineExampleTest, RunsOnARealTwoWorkerTrial) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found: example not run on a real trial";
  const auto result =
      testing::run_command(command("'" + (*samples / "trials" / "pt-ddp-2workers").string() + "'"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  // A healthy job (smdebug-samples/README.md): 36 steps, gradients at its 24 TRAIN steps; the
  // EVAL steps save none, so the spike rule skips them rather than counting them evaluated.
  EXPECT_EQ(table_row(lines, "GradientSpike"),
            (std::vector<std::string>{"GradientSpike", "NoIssuesFound", "0", "24", "-"}))
      << result.out;
  EXPECT_NE(result.out.find("36 steps replayed, "), std::string::npos) << result.out;
}

TEST_F(HandBuiltPipelineExampleTest, ReportsABadPathOrParameterAndFails) {
  testing::TempDir dir;
  const auto missing = testing::run_command(command("'" + (dir.path() / "nothing").string() + "'"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such trial folder"), std::string::npos) << missing.err;

  const auto trial = dir.path() / "job";
  write_spiking_job(trial);
  const auto bad = testing::run_command(command("'" + trial.string() + "' 0.5"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(
      bad.err.find("rule GradientNormSpike: parameter growth: \"0.5\" must be greater than 1"),
      std::string::npos)
      << bad.err;
  const auto garbage = testing::run_command(command("'" + trial.string() + "' fast"));
  EXPECT_EQ(garbage.exit_code, 1);
  EXPECT_NE(garbage.err.find("rule GradientNormSpike: parameter growth: \"fast\" is not a number"),
            std::string::npos)
      << garbage.err;
}

}  // namespace
}  // namespace rulestream
