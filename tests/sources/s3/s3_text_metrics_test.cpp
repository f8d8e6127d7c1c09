// A folder of text metrics on S3 through the CLI (in process) against a real S3-compatible
// server: inspect and replay of the prefix give what they give for the same folder on disk,
// trainer_state.json checkpoints, a CSV log and JSON lines alike (every file read in ranged GETs,
// a CSV's header looked at again before it is read further).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::run_cli;
using testing::TempDir;

// Events as JSON lines without their wall-clock time and job path.
std::vector<std::string> events_of(const std::string& out) {
  std::vector<std::string> events;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    boost::json::object event = boost::json::parse(line).as_object();
    event.erase("time");
    event.erase("trial");
    events.push_back(boost::json::serialize(event));
  }
  return events;
}

class S3TextMetricsTest : public testing::S3ServerTest {
 protected:
  S3TextMetricsTest() : S3ServerTest("text-metrics") {}

  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    server_->export_environment();
  }

  TempDir scratch_;
};

TEST_F(S3TextMetricsTest, InspectAndReplayOfAPrefixMatchTheFolder) {
  const auto job = scratch_.path() / "job";
  const auto write = [&](const std::string& path, const std::string& text) {
    std::filesystem::create_directories((job / path).parent_path());
    testing::write_text_file(job / path, text);
  };
  // A CSV log whose loss turns NaN at step 3, checkpoints of a trainer_state.json whose
  // grad_norm is NaN at step 2, and JSON lines of a validation metric.
  write("lightning_logs/version_0/metrics.csv",
        "epoch,step,train_loss,val_loss\n0,0,2.5,\n0,1,2.25,2.75\n1,2,2.0,\n1,3,nan,2.5\n");
  write("hf/checkpoint-1/trainer_state.json",
        R"({"log_history": [{"grad_norm": 1.5, "loss": 2.0, "step": 1}]})");
  write("hf/checkpoint-2/trainer_state.json",
        R"({"log_history": [{"grad_norm": 1.5, "loss": 2.0, "step": 1}, )"
        R"({"grad_norm": NaN, "loss": 1.5, "step": 2}]})");
  write("mm/vis_data/scalars.json",
        "{\"lr\": 0.1, \"loss\": 1.0, \"iter\": 1, \"step\": 1}\n"
        "{\"accuracy\": 50.0, \"step\": 1}\n");
  testing::upload_folder(*client_, job, bucket_, "team/job");
  const std::string uri = "s3://" + bucket_ + "/team/job";
  const std::string endpoint = server_->endpoint();

  const auto local = run_cli("inspect", {job.string(), "--json"});
  const auto remote = run_cli("inspect", {uri, "--json", "--s3-endpoint", endpoint});
  ASSERT_EQ(remote.exit_code, cli::kExitOk) << remote.err;
  const boost::json::value runs = boost::json::parse(remote.out).at("runs");
  EXPECT_EQ(runs, boost::json::parse(local.out).at("runs"));
  EXPECT_EQ(boost::json::parse(remote.out).at("format"), "metrics");
  ASSERT_TRUE(runs.as_object().contains("hf/trainer_state.json")) << remote.out;
  EXPECT_EQ(runs.at("hf/trainer_state.json").at("tags").at("grad_norm").at("count"), 2);
  EXPECT_EQ(runs.at("mm/vis_data/scalars.json").at("tags").at("val/accuracy").at("count"), 1);

  const auto from_folder =
      run_cli("replay", {job.string(), "--rule", "NonFinite", "--format", "json"});
  const auto from_s3 = run_cli(
      "replay", {uri, "--s3-endpoint", endpoint, "--rule", "NonFinite", "--format", "json"});
  EXPECT_EQ(from_folder.exit_code, cli::kExitRuleFired) << from_folder.err;
  EXPECT_EQ(from_s3.exit_code, cli::kExitRuleFired) << from_s3.err;
  std::vector<std::string> remote_events = events_of(from_s3.out);
  std::vector<std::string> local_events = events_of(from_folder.out);
  std::sort(remote_events.begin(), remote_events.end());
  std::sort(local_events.begin(), local_events.end());
  EXPECT_EQ(remote_events, local_events);
  // The two NaNs (train_loss at 3, grad_norm at 2), each an incident opened and closed, and
  // the status.
  std::size_t fired = 0;
  for (const std::string& event : local_events) {
    if (event.find("\"kind\":\"condition_met\"") != std::string::npos) ++fired;
  }
  EXPECT_EQ(fired, 2U) << from_folder.out;
}

}  // namespace
}  // namespace rulestream
