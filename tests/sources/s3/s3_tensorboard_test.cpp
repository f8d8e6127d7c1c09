// TensorBoard logdirs (and folders of text metrics, the other series format) on S3 through the
// CLI (in process) against a real S3-compatible server: inspect and replay give what they give
// for the same logdir in a folder, and a watch follows event files that grow (re-uploaded
// larger, as a syncing job does).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/cli/cli.hpp"
#include "apps/simulator/tensorboard_simulator.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/tcp_proxy.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::run_cli;
using testing::TempDir;

// JSON lines without their wall-clock time and trial path: what must match between sources.
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

class S3TensorBoardTest : public testing::S3ServerTest {
 protected:
  S3TensorBoardTest() : S3ServerTest("tensorboard") {}

  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    server_->export_environment();
  }

  TempDir scratch_;
};

TEST_F(S3TensorBoardTest, InspectAndReplayOfAPrefixMatchTheFolder) {
  TensorBoardSimulatorOptions options;
  options.output = scratch_.path() / "logs";
  options.scenario = TensorBoardScenario::Exploding;
  options.runs = 2;
  options.steps = 200;
  simulate_tensorboard(options);
  testing::upload_folder(*client_, options.output, bucket_, "team/logs");
  const std::string uri = "s3://" + bucket_ + "/team/logs";
  const std::string endpoint = server_->endpoint();

  const auto local = run_cli("inspect", {options.output.string(), "--json"});
  const auto remote = run_cli("inspect", {uri, "--json", "--s3-endpoint", endpoint});
  ASSERT_EQ(remote.exit_code, cli::kExitOk) << remote.err;
  EXPECT_EQ(boost::json::parse(remote.out).at("runs"), boost::json::parse(local.out).at("runs"));

  const std::vector<std::string> rules{"--rule",    "NonFinite", "--rule",
                                       "LossSpike", "--format",  "json"};
  std::vector<std::string> local_args{options.output.string()};
  local_args.insert(local_args.end(), rules.begin(), rules.end());
  std::vector<std::string> remote_args{uri, "--s3-endpoint", endpoint};
  remote_args.insert(remote_args.end(), rules.begin(), rules.end());
  const auto from_folder = run_cli("replay", local_args);
  const auto from_s3 = run_cli("replay", remote_args);
  EXPECT_EQ(from_s3.exit_code, cli::kExitRuleFired) << from_s3.err;
  EXPECT_EQ(from_folder.exit_code, cli::kExitRuleFired) << from_folder.err;
  // The same events; runs read at the same time may interleave them differently.
  auto remote_events = events_of(from_s3.out);
  auto local_events = events_of(from_folder.out);
  std::sort(remote_events.begin(), remote_events.end());
  std::sort(local_events.begin(), local_events.end());
  EXPECT_EQ(remote_events, local_events);
  EXPECT_FALSE(remote_events.empty());
}

TEST_F(S3TensorBoardTest, AWatchFollowsAnEventFileReUploadedAsItGrows) {
  const auto file = scratch_.path() / "events.out.tfevents.1.host";
  const std::string key = "live/run/events.out.tfevents.1.host";
  auto writer = std::make_unique<TensorBoardWriter>(file);
  for (int step = 0; step < 30; ++step) writer->add_scalar("train/loss", step, 1.0F, step);
  const auto upload = [&] {
    client_->put(bucket_, key, testing::bytes_of(testing::read_text_file(file)));
  };
  upload();
  const std::string uri = "s3://" + bucket_ + "/live";
  auto watch = std::async(std::launch::async, [&] {
    return run_cli("watch", {uri, "--rule", "NonFinite", "--format", "json", "--poll-interval",
                             "0.1", "--s3-endpoint", server_->endpoint()});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  writer->add_scalar("train/loss", 30, std::nanf(""), 30);
  writer.reset();
  upload();  // the same object, larger: the watch reads what it gained
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ::kill(::getpid(), SIGTERM);  // the CLI's own handler stops the watch and reports
  const auto outcome = watch.get();
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  const auto events = events_of(outcome.out);
  // The NaN at step 30, its incident resolved as the watch ends, then the status.
  ASSERT_EQ(events.size(), 3U) << outcome.out;
  EXPECT_NE(events[1].find("\"kind\":\"incident_resolved\""), std::string::npos) << events[1];
  EXPECT_NE(events[0].find("\"global_step\":30"), std::string::npos) << events[0];
}

// A watch whose listings fail from some point on (the server gone): it says so once, keeps
// trying, and stopped then it ends in Error, exit status 2: it did not see the logdir as it is.
TEST_F(S3TensorBoardTest, AWatchStoppedWhileItsListingsFailIsAnErrorNotAnAllClear) {
  const auto file = scratch_.path() / "events.out.tfevents.1.host";
  {
    TensorBoardWriter writer(file);
    for (int step = 0; step < 30; ++step) writer.add_scalar("train/loss", step, 1.0F, step);
  }
  client_->put(bucket_, "gone/run/events.out.tfevents.1.host",
               testing::bytes_of(testing::read_text_file(file)));
  testing::TcpProxy proxy(server_->port());
  auto watch = std::async(std::launch::async, [&] {
    return run_cli("watch", {"s3://" + bucket_ + "/gone", "--rule", "NonFinite", "--format", "json",
                             "--poll-interval", "0.1", "--s3-retries", "0", "--s3-endpoint",
                             proxy.endpoint()});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  proxy.go_down();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ::kill(::getpid(), SIGTERM);
  const auto outcome = watch.get();
  EXPECT_EQ(outcome.exit_code, cli::kExitError) << outcome.err;
  const auto said = [&](const std::string& text) {
    return outcome.err.find(text) != std::string::npos;
  };
  EXPECT_TRUE(said("cannot list s3://" + bucket_ + "/gone")) << outcome.err;
  EXPECT_EQ(outcome.err.find("cannot list"), outcome.err.rfind("cannot list")) << "said once";
  const auto events = events_of(outcome.out);
  ASSERT_EQ(events.size(), 1U) << outcome.out;  // the status only
  EXPECT_NE(events[0].find("\"status\":\"Error\""), std::string::npos) << events[0];
  EXPECT_NE(events[0].find("the latest look at the logdir failed"), std::string::npos) << events[0];
}

// A folder of text metrics on S3 is read as the same folder on disk: trainer_state.json
// checkpoints, a CSV log and JSON lines alike (each file read in ranged GETs, a CSV's header
// looked at again before it is read further).
TEST_F(S3TensorBoardTest, AFolderOfTextMetricsIsReadAsOnDisk) {
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
