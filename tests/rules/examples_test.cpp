// Runs the examples a user copies, so that they never rot: they must build, run to the end and
// print what fired.

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

std::filesystem::path custom_gradient_rule_binary() {
  return testing::rulestream_binary().parent_path() / "examples" / "example_custom_gradient_rule";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class CustomGradientRuleExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Built with the tests (examples/CMakeLists.txt); absent only when its target was skipped.
    ASSERT_TRUE(std::filesystem::exists(binary_))
        << binary_.string() << " is missing: build the example_custom_gradient_rule target";
  }
  std::filesystem::path binary_ = custom_gradient_rule_binary();
};

TEST_F(CustomGradientRuleExampleTest, FiresWhereTheSimulatedGradientsExplode) {
  const auto result = testing::run_command("'" + binary_.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  // A banner, the step where gradients grow x1e4 (20), the infinite step (21), and the status;
  // NaN from 22 on is not "greater than" anything.
  ASSERT_EQ(lines.size(), 4u) << result.out;
  EXPECT_NE(lines[0].find("simulated an exploding training job in "), std::string::npos);
  EXPECT_NE(lines[1].find(" CustomGradientRule fired at step 20 (TRAIN 20) on simulated-exploding: "
                          "gradient/MLP_fc"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find(" > threshold 20"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" CustomGradientRule fired at step 21 (TRAIN 21) on simulated-exploding: "
                          "gradient/MLP_fc"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[2].find(" abs mean inf > threshold 20"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(" CustomGradientRule on simulated-exploding: IssuesFound (fired 2 "
                          "times in 40 steps evaluated)"),
            std::string::npos)
      << lines[3];
}

TEST_F(CustomGradientRuleExampleTest, RunsOnARealTrialWithAThreshold) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found: example not run on a real trial";
  const auto trial = *samples / "trials" / "pt-exploding";
  const auto result =
      testing::run_command("'" + binary_.string() + "' '" + trial.string() + "' 100.0");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  // smdebug's reference (expected/pt-exploding.rules.json): threshold 100 fires at 1, 2, 3.
  ASSERT_EQ(lines.size(), 4u) << result.out;
  for (int i = 0; i < 3; ++i) {
    const std::string step = std::to_string(i + 1);
    EXPECT_NE(lines[i].find(" CustomGradientRule fired at step " + step + " (TRAIN " + step +
                            ") on pt-exploding: gradient/"),
              std::string::npos)
        << lines[i];
  }
  EXPECT_NE(lines[3].find("IssuesFound (fired 3 times in 32 steps evaluated)"), std::string::npos)
      << lines[3];
}

TEST_F(CustomGradientRuleExampleTest, ReportsABadParameterAndFails) {
  testing::TempDir dir;
  const auto result = testing::run_command("'" + binary_.string() + "' '" +
                                           (dir.path() / "nothing").string() + "' 20");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no such trial folder"), std::string::npos) << result.err;

  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "the smdebug samples are not there for the second half";
  const auto bad = testing::run_command("'" + binary_.string() + "' '" +
                                        (*samples / "trials" / "pt-exploding").string() + "' abc");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("rule CustomGradientRule: parameter threshold: \"abc\" is not a number"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace rulestream
