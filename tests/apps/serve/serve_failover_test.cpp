// `rulestream serve --coordinator`: instances sharing a redis-server of the test's own, jobs
// written live while they run; one instance killed (SIGKILL) in the middle of its jobs, or
// paused past its lease and woken after the takeover (or after its job ended elsewhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "apps/coordination/redis_connection.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "tests/support/alertmanager_receiver.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/loopback_ports.hpp"
#include "tests/support/prometheus_text.hpp"
#include "tests/support/redis_test_server.hpp"
#include "tests/support/serve_process.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/webhook_test_support.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::find_job;
using testing::rule_of;
using testing::ServeProcess;
using testing::TempDir;

constexpr int kInstances = 3;
constexpr int kJobs = 4;
constexpr int kMaxRunning = 2;  // 3 x 2 slots for 4 jobs: the survivors have room for the dead's
constexpr std::int64_t kSteps = 200;
constexpr auto kStepDelay = 40ms;  // 200 steps: about 8 s of writing
// Long enough that a heartbeat (every second) is not missed on a loaded two-core machine, where
// a lapse would be a legitimate takeover that these tests do not expect.
constexpr auto kLeaseTtl = 3s;
constexpr auto kPollInterval = 200ms;

std::string field_of(const json::object* job, const char* field) {
  if (!job || !job->contains(field) || !job->at(field).is_string()) return "";
  return std::string(job->at(field).as_string());
}

// The data a report page charts (its report-data script, JSON).
json::object report_data(const std::string& page) {
  const std::string open = R"(<script type="application/json" id="report-data">)";
  const auto begin = page.find(open);
  if (begin == std::string::npos) return {};
  const auto end = page.find("</script>", begin);
  return json::parse(page.substr(begin + open.size(), end - begin - open.size())).as_object();
}

std::string job_name(int j) {
  return "job" + std::to_string(j);
}

std::string instance_name(int i) {
  return "instance" + std::to_string(i);
}

// A rule event's stable id as serve makes it: JOB/CONFIGURATION/STEP/0 for a condition met (each
// rule here fires at most once a step), JOB/CONFIGURATION/status for a status.
std::string id_of(const json::object& event) {
  const std::string prefix = std::string(event.at("trial").as_string()) + "/" +
                             std::string(event.at("rule_configuration").as_string()) + "/";
  if (event.at("kind").as_string() == "status") return prefix + "status";
  return prefix + std::to_string(event.at("global_step").as_int64()) + "/0";
}

// What the jobs should have said, worked out from the simulators' fault steps: a
// VanishingGradient firing at every step from it on, and each rule's status.
std::set<std::string> expected_ids(const std::vector<std::unique_ptr<JobSimulator>>& simulators) {
  std::set<std::string> expected;
  for (std::size_t j = 0; j < simulators.size(); ++j) {
    const std::string job = job_name(static_cast<int>(j));
    for (std::int64_t step = simulators[j]->fault_step(); step < kSteps; ++step) {
      expected.insert(job + "/VanishingGradient/" + std::to_string(step) + "/0");
    }
    expected.insert(job + "/VanishingGradient/status");
    expected.insert(job + "/NonFinite/status");
  }
  return expected;
}

class ServeFailover : public testing::RedisServerTest {
 protected:
  // An instance following `root` with both rules, its service sink a file of its own in `out`.
  std::unique_ptr<ServeProcess> start_instance(const TempDir& root, const TempDir& out, int i) {
    return std::make_unique<ServeProcess>(std::vector<std::string>{
        "--jobs",          root.path().string(),
        "--rule",          "VanishingGradient",
        "--rule",          "NonFinite",
        "--coordinator",   redis_->url(),
        "--lease-ttl",     std::to_string(kLeaseTtl.count()),
        "--instance",      instance_name(i),
        "--max-running",   std::to_string(kMaxRunning),
        "--poll-interval", "0.2",
        "--idle-timeout",  "20",
        "--sink",          "file:" + (out.path() / (instance_name(i) + ".jsonl")).string()});
  }

  // Every job's options (written live, firing from step 10) and its simulator. Each job has
  // its own rules file: the same rules, and a file sink of its own in `out`, JOB-own.jsonl.
  // With `alertmanager` (a receiver's URL), an Alertmanager sink too, resending every second.
  static std::vector<std::unique_ptr<JobSimulator>> simulators_for(
      const TempDir& root, const TempDir& out, int jobs, const std::string& alertmanager = {}) {
    std::vector<std::unique_ptr<JobSimulator>> simulators;
    for (int j = 0; j < jobs; ++j) {
      std::string sinks = R"([{"type": "file", "path": ")" + own_file(out, j).string() + R"("})";
      if (!alertmanager.empty()) {
        sinks += R"(, {"type": "alertmanager", "url": ")" + alertmanager +
                 R"(", "resend_interval": "1", "dead_letter_path": ")" +
                 (out.path() / (job_name(j) + "-undelivered.jsonl")).string() + R"("})";
      }
      testing::write_text_file(
          root.path() / job_name(j) / "rulestream-rules.json",
          R"({"rules": [{"RuleParameters": {"rule_to_invoke": "VanishingGradient"}},
                        {"RuleParameters": {"rule_to_invoke": "NonFinite"}}],
              "sinks": )" +
              sinks + "]}");
      JobSimulatorOptions options;
      options.output = root.path() / job_name(j);
      options.overwrite = true;  // beside its rules file
      options.scenario = JobScenario::VanishingGradients;
      options.steps = kSteps;
      options.step_delay = kStepDelay;
      options.fault_step = 10;  // the owner has published when it dies or pauses
      simulators.push_back(std::make_unique<JobSimulator>(options));
    }
    return simulators;
  }

  // The first instance alone takes job 0; once it runs (5 firings published), a second
  // instance starts beside it. The second is null when either could not be had.
  std::pair<std::unique_ptr<ServeProcess>, std::unique_ptr<ServeProcess>> start_owner_then_standby(
      const TempDir& root, const TempDir& out) {
    auto first = start_instance(root, out, 0);
    const bool running =
        first && first->port() != 0 &&
        first->wait_for_jobs(
            [](const json::value& answer) {
              const json::object* job = find_job(answer, job_name(0));
              return field_of(job, "state") == "Running" && job &&
                     rule_of(*job, "VanishingGradient").at("firings").as_int64() >= 5;
            },
            30s);
    std::unique_ptr<ServeProcess> second;
    if (running) second = start_instance(root, out, 1);
    if (second && second->port() == 0) second.reset();
    return {std::move(first), std::move(second)};
  }

  // Until every event is delivered and acknowledged (the stream empty), for at most 30 s.
  void expect_stream_drained(RedisConnection& redis) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (redis.command({"XLEN", "rulestream:events"}).as_integer() != 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(redis.command({"XLEN", "rulestream:events"}).as_integer(), 0);
  }

  static std::filesystem::path own_file(const TempDir& out, int j) {
    return out.path() / (job_name(j) + "-own.jsonl");
  }

  // Each expected id published into the stream once for each of the job's two sinks (0: the
  // service's, 1: its own rules file's), replays or not: the jobs' sets of published ids, and
  // the count of entries Redis ever added to the stream.
  void expect_published_once(RedisConnection& redis, const std::set<std::string>& expected,
                             int jobs) {
    std::map<std::string, std::set<std::string>> published;  // by sink
    for (int j = 0; j < jobs; ++j) {
      const RedisReply members =
          redis.command({"SMEMBERS", "rulestream:job:" + job_name(j) + ":published"});
      for (const RedisReply& member : members.as_array()) {
        const std::string text = member.as_string();  // "SINK ID"
        published[text.substr(0, text.find(' '))].insert(text.substr(text.find(' ') + 1));
      }
    }
    EXPECT_EQ(published.size(), 2u);
    EXPECT_EQ(published["0"], expected);
    EXPECT_EQ(published["1"], expected);
    const RedisReply info = redis.command({"XINFO", "STREAM", "rulestream:events"});
    std::int64_t entries_added = -1;
    for (std::size_t i = 0; i + 1 < info.as_array().size(); i += 2) {
      if (info.as_array()[i].as_string() == "entries-added") {
        entries_added = info.as_array()[i + 1].as_integer();
      }
    }
    EXPECT_EQ(entries_added, 2 * static_cast<std::int64_t>(expected.size()));
  }

  // Each job's VanishingGradient alert resolved, and never fired again after that: the
  // instance whose sink sent a firing is the one that resolves it (an alert resent by an
  // instance that did not see the rule's status would fire again what the other resolved).
  // Waits two resend intervals first, for any such resend. NonFinite never fired: no alert.
  void expect_alerts_resolved_for_good(
      const testing::AlertmanagerReceiver& receiver,
      const std::vector<std::unique_ptr<JobSimulator>>& simulators) {
    const int jobs = static_cast<int>(simulators.size());
    std::this_thread::sleep_for(2500ms);
    EXPECT_TRUE(receiver.problems().empty()) << receiver.problems().front();
    std::map<std::string, std::vector<std::pair<bool, std::int64_t>>> sent;  // resolved, firings
    for (const testing::AlertPost& post : receiver.posts()) {
      for (const testing::ReceivedAlert& alert : post.alerts) {
        const bool resolved = !alert.ends_at_text.empty() && alert.ends_at <= post.received_at;
        sent[alert.labels.at("training_job") + "/" + alert.labels.at("rule_configuration")]
            .emplace_back(resolved, std::stoll(alert.annotations.at("firings")));
      }
    }
    for (int j = 0; j < jobs; ++j) {
      const auto& posts = sent[job_name(j) + "/VanishingGradient"];
      const auto resolved =
          std::find_if(posts.begin(), posts.end(), [](const auto& post) { return post.first; });
      ASSERT_NE(resolved, posts.end()) << job_name(j) << ": never resolved";
      for (auto later = resolved; later != posts.end(); ++later) {
        EXPECT_TRUE(later->first) << job_name(j) << ": fired again after it was resolved";
      }
      // Every firing counted, the taken-over jobs' by their replay.
      EXPECT_EQ(resolved->second, kSteps - simulators[j]->fault_step()) << job_name(j);
      EXPECT_EQ(sent.count(job_name(j) + "/NonFinite"), 0u) << job_name(j);
    }
  }

  // Every expected id of each job arrived at the job's own file sink, made by whichever
  // instance delivered it, and each once, but for the at-least-once case (a batch of at most
  // 100 that an interrupted instance wrote and did not acknowledge; these files do not say who
  // wrote a line). Before its events went through the stream, a takeover's replay wrote every
  // firing of the job's again.
  void expect_own_files_have_each_once(const TempDir& out, int jobs,
                                       const std::set<std::string>& expected) {
    int delivered_again = 0;
    for (int j = 0; j < jobs; ++j) {
      std::map<std::string, int> arrived;
      std::ifstream file(own_file(out, j));
      for (std::string line; std::getline(file, line);) {
        ++arrived[id_of(json::parse(line).as_object())];
      }
      std::set<std::string> ids, expected_here;
      for (const auto& [id, count] : arrived) {
        ids.insert(id);
        if (count == 2) {
          std::cerr << id << " delivered again to its job's own sink (at least once)\n";
          ++delivered_again;
        } else if (count != 1) {
          ADD_FAILURE() << id << " arrived " << count << " times at its job's own sink";
        }
      }
      for (const std::string& id : expected) {
        if (id.starts_with(job_name(j) + "/")) expected_here.insert(id);
      }
      EXPECT_EQ(ids, expected_here) << job_name(j);
    }
    EXPECT_LE(delivered_again, 100);
  }

  // Every expected id arrived at the sinks (each instance's file), and each once. A second
  // copy is the at-least-once case, and only that: instance `interrupted` wrote it and was
  // killed or paused before it acknowledged it (one batch, at most 100 entries), so another
  // instance claimed it and delivered it again.
  void expect_arrived_once(const TempDir& out, int instances, int interrupted,
                           const std::set<std::string>& expected) {
    std::map<std::string, int> arrived;
    std::set<std::string> in_interrupted_file;
    for (int i = 0; i < instances; ++i) {
      std::ifstream file(out.path() / (instance_name(i) + ".jsonl"));
      for (std::string line; std::getline(file, line);) {
        const std::string id = id_of(json::parse(line).as_object());
        ++arrived[id];
        if (i == interrupted) in_interrupted_file.insert(id);
      }
    }
    std::set<std::string> ids;
    int delivered_again = 0;
    for (const auto& [id, count] : arrived) {
      ids.insert(id);
      if (count == 1) continue;
      if (count == 2 && in_interrupted_file.count(id) != 0) {
        std::cerr << id << " delivered again after the interruption (at least once)\n";
        ++delivered_again;
        continue;
      }
      ADD_FAILURE() << id << " arrived " << count << " times";
    }
    EXPECT_LE(delivered_again, 100);
    EXPECT_EQ(ids, expected);
  }

  // Every job Finished on `serve`, with the statuses and firings its simulator makes, on an
  // instance other than `not_on`.
  void expect_jobs_finished(ServeProcess& serve,
                            const std::vector<std::unique_ptr<JobSimulator>>& simulators,
                            const std::string& not_on) {
    const int jobs = static_cast<int>(simulators.size());
    ASSERT_TRUE(serve.wait_for_jobs(
        [&](const json::value& answer) {
          for (int j = 0; j < jobs; ++j) {
            if (field_of(find_job(answer, job_name(j)), "state") != "Finished") return false;
          }
          return true;
        },
        60s))
        << serve.get("/api/jobs").body << serve.log();
    const json::value answer = serve.get_json("/api/jobs");
    EXPECT_EQ(answer.at("jobs").as_array().size(), static_cast<std::size_t>(jobs));
    for (int j = 0; j < jobs; ++j) {
      const json::object& job = *find_job(answer, job_name(j));
      EXPECT_EQ(job.at("last_step").as_int64(), kSteps - 1) << job_name(j);
      const json::object& vanishing = rule_of(job, "VanishingGradient");
      EXPECT_EQ(vanishing.at("status").as_string(), "IssuesFound") << job_name(j);
      EXPECT_EQ(vanishing.at("firings").as_int64(), kSteps - simulators[j]->fault_step())
          << job_name(j);
      EXPECT_EQ(rule_of(job, "NonFinite").at("status").as_string(), "NoIssuesFound");
      EXPECT_NE(field_of(&job, "instance"), not_on) << job_name(j);
    }
    // Each job's events, on this instance whether it ran the job or not: every one its rules
    // made, once, a takeover's replay notwithstanding (the owners' event log in Redis).
    const std::set<std::string> expected = expected_ids(simulators);
    for (int j = 0; j < jobs; ++j) {
      const json::value events = serve.get_json("/api/jobs/" + job_name(j) + "/events");
      std::multiset<std::string> ids;
      for (const auto& event : events.at("events").as_array()) ids.insert(id_of(event.as_object()));
      std::multiset<std::string> expected_here;
      for (const std::string& id : expected) {
        if (id.starts_with(job_name(j) + "/")) expected_here.insert(id);
      }
      EXPECT_EQ(ids, expected_here) << job_name(j);
      EXPECT_EQ(events.at("dropped").as_int64(), 0) << job_name(j);
    }
    // A job's runner ends (Finished here) a moment before the supervisor ends its lease.
    const auto leases_held = [&serve] {
      return testing::parse_prometheus_text(serve.get("/metrics").body)
          .value("rulestream_coordinator_leases_held");
    };
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (leases_held() != 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
    }
    const auto metrics = testing::parse_prometheus_text(serve.get("/metrics").body);
    EXPECT_EQ(metrics.value("rulestream_jobs", {{"state", "Finished"}}), jobs);
    EXPECT_EQ(metrics.value("rulestream_coordinator_leases_held"), 0);
    if (HasFailure()) std::cerr << "the instance said:\n" << serve.log();
  }
};

TEST_F(ServeFailover, AKilledInstancesJobsAreTakenOverAndEveryEventArrivesOncePerId) {
  TempDir root;
  TempDir out;
  testing::AlertmanagerReceiver alertmanager;
  std::vector<std::unique_ptr<ServeProcess>> instances;
  for (int i = 0; i < kInstances; ++i) {
    instances.push_back(start_instance(root, out, i));
    ASSERT_NE(instances.back()->port(), 0);
  }
  const auto simulators = simulators_for(root, out, kJobs, alertmanager.url());
  std::atomic<int> written{0};
  std::vector<std::thread> writers;
  for (const auto& simulator : simulators) {
    writers.emplace_back([&] {
      simulator->run();
      ++written;
    });
  }
  const auto join_writers = [&] {
    for (auto& writer : writers) {
      if (writer.joinable()) writer.join();
    }
  };

  // Every job running, each on one instance; the victim is the instance running the most (two:
  // four jobs on three instances of two slots), killed once its jobs are past step 20 and have
  // fired (published events a takeover's replay must not publish again).
  std::map<std::string, std::vector<std::string>> jobs_of;  // instance: its jobs
  const bool all_running = instances[0]->wait_for_jobs(
      [&](const json::value& answer) {
        jobs_of.clear();
        for (int j = 0; j < kJobs; ++j) {
          const json::object* job = find_job(answer, job_name(j));
          if (field_of(job, "state") != "Running" || field_of(job, "instance").empty()) {
            return false;
          }
          jobs_of[field_of(job, "instance")].push_back(job_name(j));
        }
        return true;
      },
      30s);
  if (!all_running) join_writers();
  ASSERT_TRUE(all_running) << instances[0]->get("/api/jobs").body;
  int victim = 0;
  for (int i = 0; i < kInstances; ++i) {
    EXPECT_LE(jobs_of[instance_name(i)].size(), static_cast<std::size_t>(kMaxRunning));
    if (jobs_of[instance_name(i)].size() > jobs_of[instance_name(victim)].size()) victim = i;
  }
  const std::vector<std::string> victims_jobs = jobs_of[instance_name(victim)];
  ASSERT_EQ(victims_jobs.size(), 2u);
  const bool under_way = instances[victim]->wait_for_jobs(
      [&](const json::value& answer) {
        for (const std::string& id : victims_jobs) {
          const json::object* job = find_job(answer, id);
          if (!job || !job->at("last_step").is_int64() || job->at("last_step").as_int64() < 20 ||
              rule_of(*job, "VanishingGradient").at("firings").as_int64() < 5) {
            return false;
          }
        }
        return true;
      },
      30s);
  if (!under_way) join_writers();
  ASSERT_TRUE(under_way);
  instances[victim]->kill();
  const auto killed = std::chrono::steady_clock::now();
  std::vector<ServeProcess*> survivors;
  for (int i = 0; i < kInstances; ++i) {
    if (i != victim) survivors.push_back(instances[i].get());
  }

  // The dead instance's jobs are taken over by the others while they are still being written:
  // within the lease's TTL of its last heartbeat, plus a poll to notice and one to publish.
  std::chrono::steady_clock::duration takeover{};
  const bool taken_over = survivors[0]->wait_for_jobs(
      [&](const json::value& answer) {
        for (const std::string& id : victims_jobs) {
          const std::string owner = field_of(find_job(answer, id), "instance");
          if (owner.empty() || owner == instance_name(victim)) return false;
        }
        takeover = std::chrono::steady_clock::now() - killed;
        return true;
      },
      30s);
  const int written_at_takeover = written;
  join_writers();
  ASSERT_TRUE(taken_over) << survivors[0]->get("/api/jobs").body;
  EXPECT_EQ(written_at_takeover, 0) << "the takeover came after the jobs were written";
  EXPECT_LE(takeover, kLeaseTtl + 3 * kPollInterval + 500ms)
      << std::chrono::duration<double>(takeover).count() << " s";
  std::cerr << "takeover " << std::chrono::duration<double>(takeover).count() << " s after the "
            << "kill (lease TTL " << std::chrono::duration<double>(kLeaseTtl).count() << " s)\n";

  // Every job ends with the right statuses, on every living instance: the taken-over jobs
  // replayed from their start, so their firings count every step from the fault on.
  for (ServeProcess* survivor : survivors) {
    expect_jobs_finished(*survivor, simulators, instance_name(victim));
  }
  // Every job's report page on an instance whatever ran it (most of them ran elsewhere): the
  // statuses and firings its simulator makes, in the page's own data.
  for (int j = 0; j < kJobs; ++j) {
    const auto page = survivors[0]->get("/jobs/" + job_name(j) + "/report");
    ASSERT_EQ(page.status, 200u) << job_name(j) << ": " << page.body;
    const json::object data = report_data(page.body);
    EXPECT_EQ(data.at("job").at("ended").as_bool(), true) << job_name(j);
    std::map<std::string, std::pair<std::string, std::int64_t>> rules;  // status, firings
    for (const auto& rule : data.at("rules").as_array()) {
      rules[std::string(rule.at("rule").as_string())] = {std::string(rule.at("status").as_string()),
                                                         rule.at("firings").as_int64()};
    }
    EXPECT_EQ(rules["VanishingGradient"].first, "IssuesFound") << job_name(j);
    EXPECT_EQ(rules["VanishingGradient"].second, kSteps - simulators[j]->fault_step())
        << job_name(j);
    EXPECT_EQ(rules["NonFinite"].first, "NoIssuesFound") << job_name(j);
  }
  expect_alerts_resolved_for_good(alertmanager, simulators);
  // The taken-over jobs were leased twice (their fencing counters say so), the others once.
  RedisConnection redis(redis_->endpoint());
  for (int j = 0; j < kJobs; ++j) {
    const bool taken = std::count(victims_jobs.begin(), victims_jobs.end(), job_name(j)) != 0;
    EXPECT_EQ(redis.command({"GET", "rulestream:job:" + job_name(j) + ":fence"}).as_string(),
              taken ? "2" : "1")
        << job_name(j);
  }
  expect_stream_drained(redis);  // the dead instance's unacknowledged entries claimed too
  for (ServeProcess* survivor : survivors) EXPECT_EQ(survivor->stop(), 0) << survivor->log();
  const std::set<std::string> expected = expected_ids(simulators);
  expect_published_once(redis, expected, kJobs);
  expect_arrived_once(out, kInstances, victim, expected);
  expect_own_files_have_each_once(out, kJobs, expected);
  if (HasFailure()) {
    for (ServeProcess* survivor : survivors) std::cerr << "a survivor said:\n" << survivor->log();
  }
}

TEST_F(ServeFailover, AnOwnerPausedPastItsLeaseWakesFencedAndHandsItsJobOver) {
  TempDir root;
  TempDir out;
  const auto simulators = simulators_for(root, out, 1);
  std::thread writer([&] { simulators[0]->run(); });
  auto [first, second] = start_owner_then_standby(root, out);
  if (!second) writer.join();
  ASSERT_TRUE(second) << (first ? first->log() : "no first instance");

  // The owner stops answering for twice its lease: the other instance takes the job over.
  first->pause();
  const bool taken_over = second->wait_for_jobs(
      [](const json::value& answer) {
        return field_of(find_job(answer, job_name(0)), "instance") == instance_name(1);
      },
      30s);
  if (taken_over) std::this_thread::sleep_for(kLeaseTtl);  // and runs on with it
  // It wakes: its rules go on where they were, but nothing it publishes is the job's any more
  // (its token is fenced), its heartbeat finds the lease gone, and it hands the job over.
  first->resume();
  writer.join();
  ASSERT_TRUE(taken_over) << second->get("/api/jobs").body;
  expect_jobs_finished(*second, simulators, instance_name(0));
  expect_jobs_finished(*first, simulators, instance_name(0));

  RedisConnection redis(redis_->endpoint());
  EXPECT_EQ(redis.command({"GET", "rulestream:job:" + job_name(0) + ":fence"}).as_string(), "2");
  expect_stream_drained(redis);
  EXPECT_EQ(first->stop(), 0) << first->log();
  // (Its log read whole: what it said is read while it is waited for, and at its exit.)
  EXPECT_NE(first->log().find("job " + job_name(0) + " handed over"), std::string::npos)
      << first->log();
  EXPECT_EQ(second->stop(), 0) << second->log();
  const std::set<std::string> expected = expected_ids(simulators);
  expect_published_once(redis, expected, 1);
  expect_arrived_once(out, 2, 0, expected);
  expect_own_files_have_each_once(out, 1, expected);
  if (HasFailure()) std::cerr << "the paused instance said:\n" << first->log();
}

// The owner pauses with an alert firing, and its job is taken over and ends (the new owner
// resolves the alert) while it sleeps. When it wakes, its sink's resend is long due: it must
// not fire again the alert the new owner resolved (its resends ask whether the job is still
// its own).
TEST_F(ServeFailover, AnOwnerThatWakesAfterItsJobEndedElsewhereResendsNoAlert) {
  TempDir root;
  TempDir out;
  testing::AlertmanagerReceiver alertmanager;
  const auto simulators = simulators_for(root, out, 1, alertmanager.url());
  std::thread writer([&] { simulators[0]->run(); });
  auto [first, second] = start_owner_then_standby(root, out);
  if (!second) writer.join();
  ASSERT_TRUE(second) << (first ? first->log() : "no first instance");
  ASSERT_TRUE(alertmanager.wait_for_posts(1, 10s));  // the first owner's alert fires

  first->pause();
  writer.join();
  expect_jobs_finished(*second, simulators, instance_name(0));
  std::this_thread::sleep_for(1500ms);  // past the paused sink's resend interval (1 s)
  first->resume();
  expect_alerts_resolved_for_good(alertmanager, simulators);
  EXPECT_EQ(first->stop(), 0) << first->log();
  EXPECT_EQ(second->stop(), 0) << second->log();
  if (HasFailure()) std::cerr << "the paused instance said:\n" << first->log();
}

// Redis restarted without its data: the stream's consumer group is gone (NOGROUP). The running
// instance makes it again, says so, and the jobs found after the restart reach its sink; while
// Redis is away, /readyz says why. Before, every later event reached no sink, with exit 0.
TEST_F(ServeFailover, ARedisRestartedEmptyHasItsConsumerGroupMadeAgain) {
  TempDir root;
  TempDir out;
  const auto sink = out.path() / (instance_name(0) + ".jsonl");
  const auto write_job = [&](const std::string& name) {
    JobSimulatorOptions options;
    options.output = root.path() / name;
    options.scenario = JobScenario::VanishingGradients;
    options.steps = 12;
    options.fault_step = 8;  // 4 firings, and each rule's status
    JobSimulator(options).run();
  };
  const auto events_of = [&](const std::string& job) {
    std::size_t count = 0;
    if (!std::filesystem::exists(sink)) return count;
    for (const json::object& event : testing::read_json_lines(sink)) {
      if (event.at("trial").as_string() == job) ++count;
    }
    return count;
  };
  write_job("before");
  const auto instance = start_instance(root, out, 0);
  ASSERT_NE(instance->port(), 0);
  ASSERT_TRUE(testing::eventually([&] { return events_of("before") == 6; }, 30s))
      << instance->log();

  ASSERT_TRUE(redis_->restart());  // empty: no group, no stream, no job states
  write_job("after");
  EXPECT_TRUE(testing::eventually([&] { return events_of("after") == 6; }, 30s)) << instance->log();
  EXPECT_TRUE(testing::eventually([&] { return instance->get("/readyz").status == 200; }, 10s));
  EXPECT_EQ(instance->stop(), 0);
  // (All it printed is read once it exited.)
  EXPECT_NE(instance->log().find("consumer group was gone"), std::string::npos) << instance->log();
}

// Instances sharing a Redis share the jobs, so they must judge them alike: one started with
// other rules is refused, naming both, rather than splitting the jobs' rules silently. Sink
// targets may differ (a file per instance), their kinds may not.
TEST_F(ServeFailover, AnInstanceWithOtherRulesIsRefusedNamingBoth) {
  TempDir root;
  TempDir out;
  const auto first = start_instance(root, out, 0);
  ASSERT_NE(first->port(), 0);
  const auto serve = [&](std::vector<std::string> rules) {
    std::vector<std::string> args{"--jobs",        root.path().string(),
                                  "--coordinator", redis_->url(),
                                  "--instance",    instance_name(1),
                                  "--listen",      "127.0.0.1:0",
                                  "--state-dir",   out.path().string(),
                                  "--sink",        "file:" + (out.path() / "other.jsonl").string()};
    args.insert(args.end(), rules.begin(), rules.end());
    return testing::run_cli("serve", args);
  };
  const auto refused = serve({"--rule", "NonFinite"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("run other rules or sinks (2 rules (VanishingGradient, NonFinite)"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("this one: 1 rule (NonFinite)"), std::string::npos) << refused.err;
  // The same rules with a sink file of its own: it starts (and is stopped here).
  ServeProcess second({"--jobs", root.path().string(), "--coordinator", redis_->url(), "--instance",
                       instance_name(1), "--rule", "VanishingGradient", "--rule", "NonFinite",
                       "--sink", "file:" + (out.path() / "other.jsonl").string()});
  EXPECT_NE(second.port(), 0);
  EXPECT_EQ(second.stop(), 0);
  EXPECT_EQ(first->stop(), 0);
}

TEST(ServeCoordinator, RefusesACoordinatorItCannotUseNamingIt) {
  TempDir root;
  const auto serve = [&](std::vector<std::string> more) {
    std::vector<std::string> args{"--jobs",    root.path().string(), "--rule",
                                  "NonFinite", "--listen",           "127.0.0.1:0"};
    args.insert(args.end(), more.begin(), more.end());
    return testing::run_cli("serve", args);
  };
  auto outcome = serve({"--coordinator", "http://127.0.0.1:6379"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("--coordinator must be redis://HOST:PORT[/DB]"), std::string::npos)
      << outcome.err;
  outcome = serve({"--coordinator", "redis://user:hunter2@127.0.0.1:6379"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.err.find("hunter2"), std::string::npos) << outcome.err;
  // Nobody listens there: the server is named, and serve does not start.
  const std::string nobody = "127.0.0.1:" + std::to_string(testing::free_port());
  outcome = serve({"--coordinator", "redis://" + nobody});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("redis " + nobody + ": cannot connect"), std::string::npos)
      << outcome.err;
  outcome = serve({"--coordinator", "redis://" + nobody, "--instance", "a#b"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("--instance must be a non-empty name without '#'"), std::string::npos)
      << outcome.err;
  outcome = serve({"--instance", "a"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("--instance is for --coordinator"), std::string::npos) << outcome.err;
  outcome = serve({"--coordinator", "redis://" + nobody, "--lease-ttl", "0"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("--lease-ttl must be a positive number of seconds"), std::string::npos)
      << outcome.err;
}

}  // namespace
}  // namespace rulestream
