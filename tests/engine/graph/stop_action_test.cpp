// Stop actions on their own: signals to a process the test started, commands through /bin/sh,
// and failures reported without throwing.
#include "engine/graph/stop_action.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "tests/support/sleeping_child.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::SleepingChild;
using testing::TempDir;
using namespace std::chrono_literals;

// Collects failure lines.
struct Failures {
  std::mutex mutex;
  std::vector<std::string> lines;
  StopActionRunner::FailureCallback callback() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
};

const StopRequest kRequest{"Stalled", "StalledTrainingRule", "job-1", 42};

StopAction signal_to(pid_t pid, int signal = SIGTERM) {
  StopAction action;
  action.pid = pid;
  action.signal = signal;
  return action;
}

StopAction command(std::string text) {
  StopAction action;
  action.command = std::move(text);
  return action;
}

TEST(StopAction, SignalsTheConfiguredProcess) {
  SleepingChild child;
  Failures failures;
  StopActionRunner runner(failures.callback());
  runner.run(signal_to(child.pid()), kRequest);
  const int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  const auto outcomes = runner.finish(1s);
  EXPECT_EQ(outcomes.at("Stalled"),
            (std::vector<std::string>{"sent SIGTERM to process " + std::to_string(child.pid())}));
  EXPECT_TRUE(failures.lines.empty());
}

TEST(StopAction, SendsTheSignalAsked) {
  SleepingChild child;
  StopActionRunner runner(nullptr);
  runner.run(signal_to(child.pid(), SIGUSR1), kRequest);
  const int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGUSR1);
}

TEST(StopAction, RunsTheCommandThroughTheShellWithTheFiringInItsEnvironment) {
  TempDir dir;
  const auto out = dir.path() / "stopped.txt";
  Failures failures;
  StopActionRunner runner(failures.callback());
  const std::string text =
      "echo \"$RULESTREAM_RULE_CONFIGURATION $RULESTREAM_RULE "
      "$RULESTREAM_TRIAL $RULESTREAM_STEP\" > '" +
      out.string() + "'";
  runner.run(command(text), kRequest);
  const auto outcomes = runner.finish(10s);
  EXPECT_EQ(testing::read_text_file(out), "Stalled StalledTrainingRule job-1 42\n");
  EXPECT_EQ(outcomes.at("Stalled"), (std::vector<std::string>{"ran `" + text + "`"}));
  EXPECT_TRUE(failures.lines.empty());
}

TEST(StopAction, FailuresAreReportedNotThrown) {
  Failures failures;
  StopActionRunner runner(failures.callback());
  // A process id that is certainly free: above the kernel's pid_max, never given out. (A child
  // the test started and reaped was free only until the kernel reused its id, and this test,
  // as root, would then have signalled whatever process had it.)
  pid_t gone = 0;
  {
    std::ifstream pid_max("/proc/sys/kernel/pid_max");
    long max = 0;
    ASSERT_TRUE(pid_max >> max) << "cannot read /proc/sys/kernel/pid_max";
    gone = static_cast<pid_t>(max + 1);
  }
  EXPECT_NO_THROW(runner.run(signal_to(gone), kRequest));
  EXPECT_NO_THROW(runner.run(command("exit 3"), kRequest));
  const auto outcomes = runner.finish(10s);
  ASSERT_EQ(outcomes.at("Stalled").size(), 2u);
  EXPECT_EQ(outcomes.at("Stalled")[0], "stop action failed: cannot send SIGTERM to process " +
                                           std::to_string(gone) + ": No such process");
  EXPECT_EQ(outcomes.at("Stalled")[1], "stop action failed: `exit 3` exited with status 3");
  ASSERT_EQ(failures.lines.size(), 2u);
  for (const auto& line : failures.lines) {
    EXPECT_TRUE(
        line.starts_with("rule Stalled (StalledTrainingRule) fired at step 42: stop "
                         "action failed: "))
        << line;
  }
}

TEST(StopAction, ACommandStillRunningIsSaidToBeAndLeftAlone) {
  TempDir dir;
  const auto marker = dir.path() / "late.txt";
  StopActionRunner runner(nullptr);
  runner.run(command("sleep 0.5; touch '" + marker.string() + "'"), kRequest);
  const auto outcomes = runner.finish(10ms);
  ASSERT_EQ(outcomes.at("Stalled").size(), 1u);
  EXPECT_TRUE(outcomes.at("Stalled")[0].starts_with("stop command `sleep 0.5; touch"))
      << outcomes.at("Stalled")[0];
  EXPECT_NE(outcomes.at("Stalled")[0].find("still running (pid "), std::string::npos);
  // Not killed: it finishes on its own.
  for (int i = 0; i < 100 && !std::filesystem::exists(marker); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST(StopAction, SignalsByNameOrNumber) {
  EXPECT_EQ(parse_signal("SIGTERM"), SIGTERM);
  EXPECT_EQ(parse_signal("term"), SIGTERM);
  EXPECT_EQ(parse_signal("Kill"), SIGKILL);
  EXPECT_EQ(parse_signal("SIGINT"), SIGINT);
  EXPECT_EQ(parse_signal("10"), 10);
  EXPECT_EQ(signal_name(SIGUSR2), "SIGUSR2");
  EXPECT_EQ(signal_name(40), "signal 40");
  for (const char* bad : {"SIGNOPE", "", "0", "-15", "9999", "15x"}) {
    try {
      parse_signal(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("unknown signal '" + std::string(bad) + "'"),
                std::string::npos)
          << error.what();
    }
  }
  EXPECT_EQ(describe(signal_to(1234, SIGINT)), "send SIGINT to process 1234");
  EXPECT_EQ(describe(command("touch /tmp/x")), "run `touch /tmp/x`");
}

}  // namespace
}  // namespace rulestream
