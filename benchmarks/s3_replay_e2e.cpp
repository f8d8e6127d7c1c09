// S3 sources end to end (issue 5), figures from one run side by side:
//
// - replay throughput of one generated job from a local S3-compatible server (moto on
//   127.0.0.1, signatures checked, as the tests start it) against the same job from a local
//   folder, with the four built-in rules on: medians of --repeats runs, alternating;
// - what a live watch costs in LIST requests: an S3Watcher follows a job that a writer uploads
//   step by step, and reports LISTs per poll and per new step, then LISTs per poll once the
//   prefix holds the whole job and nothing new lands (the cost must not grow with the files);
// - what threads pinning one live trial at once cost (a pipeline's rules pin the trials they
//   compare with at every step): refreshes per pin and a pin's time, on 1, 4 and 16 threads.
//
// Needs python3 with moto and boto3 (the S3 tests' server). Usage:
//   s3_replay_e2e [--steps 40] [--workers 2] [--tensor-size 16384] [--repeats 3]
//                 [--watch-steps 60] [--poll-ms 200] [--step-delay-ms 100] [--pins 20]
#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/trial_layout.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "sources/s3/s3_watcher.hpp"
#include "tests/support/s3_test_server.hpp"
#include "trial/api/trial.hpp"

namespace {

using namespace rulestream;
using SteadyClock = std::chrono::steady_clock;

std::map<std::string, std::int64_t> parse_args(int argc, char** argv) {
  std::map<std::string, std::int64_t> args = {
      {"steps", 40},       {"workers", 2},   {"tensor-size", 16384}, {"repeats", 3},
      {"watch-steps", 60}, {"poll-ms", 200}, {"step-delay-ms", 100}, {"pins", 20}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = std::string(argv[i]).substr(2);
    if (!args.contains(key)) throw std::invalid_argument("unknown option --" + key);
    args[key] = std::stoll(argv[i + 1]);
  }
  return args;
}

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct ReplayRun {
  double seconds = 0;
  std::uint64_t event_bytes = 0;
  std::int64_t conditions = 0;
};

ReplayRun replay(const std::string& path, const std::string& endpoint) {
  PipelineConfig config;
  config.paths = {path};
  config.storage.s3_endpoint = endpoint;
  for (const char* rule :
       {"VanishingGradient", "ExplodingTensor", "AllZero", "LossNotDecreasing"}) {
    config.rules.push_back({"", rule, {}});
  }
  const auto start = SteadyClock::now();
  RulePipeline pipeline(config, {});  // no sink: the report counts the events
  const auto report = pipeline.run();
  return {seconds_since(start), report.event_bytes, report.conditions_met};
}

void measure_replay(const rulestream::testing::S3TestServer& server, const S3Client& client,
                    const std::map<std::string, std::int64_t>& args) {
  rulestream::testing::TempDir scratch;
  const auto local = scratch.path() / "job";
  JobSimulatorOptions options;
  options.output = local;
  options.scenario = JobScenario::VanishingGradients;
  options.workers = static_cast<int>(args.at("workers"));
  options.steps = args.at("steps");
  options.tensor_size = args.at("tensor-size");
  const auto summary = JobSimulator(options).run();
  const std::string bucket = server.new_bucket("bench");
  client.create_bucket(bucket);
  const auto upload_start = SteadyClock::now();
  const auto files = rulestream::testing::upload_folder(client, local, bucket, "job");
  const double upload_seconds = seconds_since(upload_start);
  const std::string uri = "s3://" + bucket + "/job";

  std::vector<double> local_seconds;
  std::vector<double> s3_seconds;
  ReplayRun local_run;
  ReplayRun s3_run;
  for (std::int64_t i = 0; i < args.at("repeats"); ++i) {
    local_run = replay(local.string(), {});
    local_seconds.push_back(local_run.seconds);
    s3_run = replay(uri, server.endpoint());
    s3_seconds.push_back(s3_run.seconds);
  }
  // The ceiling: plain GETs of every event file, two threads (the cores), nothing decoded.
  std::vector<double> get_seconds;
  const auto event_files = client.list(bucket, "job/events/");
  for (std::int64_t i = 0; i < args.at("repeats"); ++i) {
    const auto start = SteadyClock::now();
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> readers;
    for (int reader = 0; reader < 2; ++reader) {
      readers.emplace_back([&] {
        for (std::size_t j = next++; j < event_files.size(); j = next++) {
          client.get(bucket, event_files[j].key);
        }
      });
    }
    for (auto& reader : readers) reader.join();
    get_seconds.push_back(seconds_since(start));
  }
  const double mb = static_cast<double>(summary.event_bytes) / 1e6;
  std::cout << std::fixed << std::setprecision(3) << "job: " << options.workers << " workers, "
            << options.steps << " steps, " << files << " files, " << mb
            << " MB of event files (uploaded in " << upload_seconds << " s)\n"
            << "replay local folder: median " << median(local_seconds) << " s, "
            << mb / median(local_seconds) << " MB/s, " << local_run.conditions << " rule events, "
            << static_cast<double>(local_run.event_bytes) / 1e6 << " MB read\n"
            << "replay S3 (moto):    median " << median(s3_seconds) << " s, "
            << mb / median(s3_seconds) << " MB/s, " << s3_run.conditions << " rule events, "
            << static_cast<double>(s3_run.event_bytes) / 1e6 << " MB read\n"
            << "plain GETs (ceiling): median " << median(get_seconds) << " s, "
            << mb / median(get_seconds) << " MB/s\n"
            << "S3 / local time:     " << median(s3_seconds) / median(local_seconds) << "\n";
}

void measure_watch(const rulestream::testing::S3TestServer& server,
                   const std::shared_ptr<S3Client>& client,
                   const std::map<std::string, std::int64_t>& args) {
  rulestream::testing::TempDir scratch;
  const auto local = scratch.path() / "job";
  const std::string bucket = server.new_bucket("watch");
  client->create_bucket(bucket);
  const auto storage = std::make_shared<S3Storage>(parse_s3_uri("s3://" + bucket + "/job"), client);

  std::mutex mutex;
  std::condition_variable ended;
  bool end_seen = false;
  std::size_t index_files = 0;
  boost::asio::io_context io;
  S3Watcher watcher(
      io, storage, {.follow = true, .poll_interval = std::chrono::milliseconds(args.at("poll-ms"))},
      [&](std::vector<TrialFile> files) {
        std::lock_guard lock(mutex);
        for (const auto& file : files) {
          if (file.kind == TrialFile::Kind::Index) ++index_files;
          if (file.kind == TrialFile::Kind::EndMarker) end_seen = true;
        }
        ended.notify_all();
      });
  watcher.start();
  std::thread loop([&] { io.run(); });

  JobSimulatorOptions options;
  options.output = local;
  options.workers = 1;
  options.steps = args.at("watch-steps");
  options.tensor_size = 256;
  options.step_delay = std::chrono::milliseconds(args.at("step-delay-ms"));
  std::set<std::string> uploaded;
  options.on_step_written = [&](const SimulatedStep&) {
    rulestream::testing::upload_new_files(*client, local, bucket, "job", uploaded);
  };
  JobSimulator(options).run();
  rulestream::testing::upload_new_files(*client, local, bucket, "job", uploaded);
  {
    std::unique_lock lock(mutex);
    ended.wait_for(lock, std::chrono::seconds(60), [&] { return end_seen; });
  }
  const auto polls = watcher.polls();
  const auto lists = watcher.list_requests();
  // Idle: the whole job is there and nothing new lands.
  std::this_thread::sleep_for(std::chrono::milliseconds(args.at("poll-ms") * 10));
  const auto idle_polls = watcher.polls() - polls;
  const auto idle_lists = watcher.list_requests() - lists;
  watcher.stop();
  io.stop();
  loop.join();
  std::cout << std::fixed << std::setprecision(2) << "watch: " << options.steps
            << " steps uploaded " << args.at("step-delay-ms") << " ms apart, poll every "
            << args.at("poll-ms") << " ms: " << index_files << " index files announced ("
            << uploaded.size() << " objects in the prefix)\n"
            << "  while the job was written: " << polls << " polls, " << lists
            << " LISTs = " << static_cast<double>(lists) / static_cast<double>(polls)
            << " per poll, " << static_cast<double>(lists) / static_cast<double>(options.steps)
            << " per new step\n"
            << "  idle, whole job in the prefix: " << idle_polls << " polls, " << idle_lists
            << " LISTs = "
            << (idle_polls > 0 ? static_cast<double>(idle_lists) / static_cast<double>(idle_polls)
                               : 0.0)
            << " per poll\n";
}

// Threads that pin a live trial on S3 at once, as a pipeline's threads pin a trial that rules
// compare with (SimilarAcrossRuns, every step evaluated at once). Each pin of a live trial
// refreshes it first: three LISTs. Callers that arrive while a refresh runs share the next one
// (TrialStore::refresh, SharedRefresh), so T threads' pins cost fewer refreshes than pins, and
// a pin waits for at most two refreshes instead of one per thread ahead of it.
void measure_live_pins(const rulestream::testing::S3TestServer& server, const S3Client& client,
                       const std::map<std::string, std::int64_t>& args) {
  rulestream::testing::TempDir scratch;
  const auto local = scratch.path() / "job";
  JobSimulatorOptions options;
  options.output = local;
  options.workers = 1;
  options.steps = args.at("steps");
  options.tensor_size = 256;
  options.write_end_marker = false;  // still training: every pin refreshes
  JobSimulator(options).run();
  const std::string bucket = server.new_bucket("live");
  client.create_bucket(bucket);
  rulestream::testing::upload_folder(client, local, bucket, "job");
  const Trial trial =
      Trial::open("s3://" + bucket + "/job", {}, {.s3_endpoint = server.endpoint()});

  const std::int64_t pins_per_thread = args.at("pins");
  std::cout << std::fixed << std::setprecision(3) << "live trial on S3, " << options.steps
            << " steps, " << pins_per_thread << " pins per thread:\n";
  double one_thread_pin_seconds = 0;
  for (const int threads : {1, 4, 16}) {
    const std::uint64_t refreshes_before = trial.refreshes();
    const auto waited_before = trial.refresh_waited();
    const auto start = SteadyClock::now();
    std::vector<std::thread> pinners;
    std::mutex failure_mutex;
    std::exception_ptr failure;
    for (int t = 0; t < threads; ++t) {
      pinners.emplace_back([&] {
        // A failed pin ends the run with its message (main), not the process from this thread.
        try {
          for (std::int64_t i = 0; i < pins_per_thread; ++i) {
            if (trial.pinned().steps().empty()) throw std::logic_error("the live trial lost steps");
          }
        } catch (...) {
          std::lock_guard lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      });
    }
    for (auto& pinner : pinners) pinner.join();
    if (failure) std::rethrow_exception(failure);
    const double seconds = seconds_since(start);
    const std::int64_t pins = threads * pins_per_thread;
    const std::uint64_t refreshes = trial.refreshes() - refreshes_before;
    const double waited =
        std::chrono::duration<double>(trial.refresh_waited() - waited_before).count();
    // A pin's time as its thread sees it: the wall time over its own pins.
    const double pin_seconds = seconds / static_cast<double>(pins_per_thread);
    if (threads == 1) one_thread_pin_seconds = pin_seconds;
    std::cout << "  " << threads << " threads: " << seconds << " s, " << pins << " pins, "
              << refreshes << " refreshes ("
              << static_cast<double>(refreshes) / static_cast<double>(pins) << " per pin), a pin "
              << pin_seconds * 1e3 << " ms (" << pin_seconds / one_thread_pin_seconds
              << "x one thread's; one refresh per pin, one at a time, would be " << threads
              << "x), waited " << waited << " s in all\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto args = parse_args(argc, argv);
    std::string why_not;
    const auto server = rulestream::testing::S3TestServer::start(why_not);
    if (!server) {
      std::cerr << "s3_replay_e2e: no S3 test server: " << why_not << "\n";
      return 2;
    }
    server->export_environment();
    const auto client = server->client();
    measure_replay(*server, *client, args);
    measure_watch(*server, client, args);
    measure_live_pins(*server, *client, args);
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "s3_replay_e2e: " << error.what() << "\n";
    return 2;
  }
}
