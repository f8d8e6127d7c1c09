// The service following more live jobs than Linux gives a user inotify instances by default
// (fs.inotify.max_user_instances, 128): every job's watcher shares the service's one instance.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/serve/job_service.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::TempDir;

bool has_event_at(const JobRegistry& registry, const std::string& job, std::int64_t step) {
  const auto events = registry.events(job);
  return events && std::any_of(events->begin(), events->end(), [&](const RuleEvent& event) {
           return event.kind == RuleEvent::Kind::ConditionMet && event.global_step == step;
         });
}

// Each job writes step 0, waits until the service's rules have fired on it (so its watcher has
// made its first scan and watches), then writes step 1 and its end marker. The poll interval,
// which is also every watcher's rescan, is an hour: step 1 reaches the rules through inotify or
// never. None of the watchers may say it falls back to rescanning.
TEST(ServeManyJobs, FollowsMoreJobsThanInotifyInstancesThroughOneWithoutRescanning) {
  constexpr int kJobs = 150;
  TempDir root;
  JobServiceOptions options;
  options.roots = {root.path()};
  // Threshold 0%: every tensor qualifies, so the rule fires on every step.
  options.base.rules = {RuleConfig{"", "AllZero", {{"threshold", "0"}}}};
  options.base.poll_interval = std::chrono::hours(1);
  options.max_running = kJobs;
  options.history = kJobs;
  std::ostringstream job_output;
  std::mutex log_mutex;
  std::vector<std::string> log;

  std::mutex mutex;
  std::condition_variable changed;
  int written_step_0 = 0;
  bool go = false;
  std::vector<std::thread> writers;
  for (int i = 0; i < kJobs; ++i) {
    writers.emplace_back([&, i] {
      JobSimulatorOptions job;
      job.output = root.path() / ("job-" + std::to_string(i));
      job.steps = 2;
      job.layers = 2;
      job.tensor_size = 16;
      job.on_step_written = [&](const SimulatedStep& step) {
        if (step.global_step != 0) return;
        std::unique_lock lock(mutex);
        ++written_step_0;
        changed.notify_all();
        changed.wait(lock, [&] { return go; });
      };
      JobSimulator(job).run();
    });
  }
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return written_step_0 == kJobs; });
  }

  ::testing::internal::CaptureStderr();
  {
    JobService service(options, {}, job_output, [&](const std::string& line) {
      std::lock_guard lock(log_mutex);
      log.push_back(line);
    });
    service.start();
    // The first scan of the root finds every job (they all hold step 0), and all of them run.
    const auto all_at = [&](std::int64_t step) {
      for (int i = 0; i < kJobs; ++i) {
        if (!has_event_at(service.registry(), "job-" + std::to_string(i), step)) return false;
      }
      return true;
    };
    EXPECT_TRUE(eventually([&] { return all_at(0); }, 120s));
    {
      std::lock_guard lock(mutex);
      go = true;
    }
    changed.notify_all();
    for (auto& writer : writers) writer.join();
    EXPECT_TRUE(eventually([&] { return all_at(1); }, 120s));
    // The end markers came through inotify too: every job finishes.
    EXPECT_TRUE(eventually(
        [&] {
          const auto states = service.registry().count_by_state();
          const auto finished = states.find(JobState::Finished);
          return finished != states.end() && finished->second == kJobs;
        },
        120s));
    service.stop();
  }
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(said.find("rescanning"), std::string::npos) << said;
  for (const std::string& line : log) {
    EXPECT_TRUE(line.starts_with("found job ")) << line;
  }
}

}  // namespace
}  // namespace rulestream
