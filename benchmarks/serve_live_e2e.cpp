// One `rulestream serve` instance following many small live jobs (issue 24): the service
// (JobService, as `serve` runs it, in-process) follows N smdebug jobs that N simulated writers
// write at a steady rate, and the benchmark measures, per step, the latency from the step's index
// file landing (renamed into place: the simulator's on_step_written) to that step's rule event
// reaching a service sink; with the peak RSS, threads, descriptors and CPU time of the service.
//
// Three processes, so that each figure is the service's alone:
// - the driver (no --phase) runs one serve phase per --jobs value and prints the table;
// - the serve phase (--phase serve) runs the service and measures; it starts
// - the write phase (--phase write): N writer threads, one per job. Each writes step 0, then
//   waits until the service follows every job (step 0's event arrived for all of them: every
//   watcher has started), then writes one step every --interval-ms, the jobs staggered evenly
//   over the interval, then the end-of-job marker. It records when each step landed on the
//   steady clock (CLOCK_MONOTONIC, the same in every process), written to a file for the serve
//   phase.
//
// The rule is AllZero with threshold 0%: every tensor qualifies, so it fires at every step and
// each step's event names the step that caused it. VanishingGradient runs beside it (a rule
// that reads the gradients, as a real configuration would).
//
//   serve_live_e2e [--jobs 100,1000] [--steps 30] [--interval-ms 2000] [--poll-ms 1000]
//                  [--rescan-ms 30000] [--own-inotify 1] [--max-running N] [--out DIR]
//
// --rescan-ms: each job's safety-net rescan while the shared inotify instance follows it
// (JobServiceOptions::inotify_rescan_interval); --own-inotify 1: every job opens an instance of
// its own instead, as serve did before (past the user's limit, the rest rescan every poll).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/serve/job_service.hpp"
#include "apps/serve/open_file_limit.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "benchmarks/child_phase.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "sinks/sink.hpp"

namespace {

using rulestream::bench::arg;
using rulestream::bench::Args;
using rulestream::bench::int_arg;
using rulestream::bench::load_average;
using SteadyClock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string job_name(std::int64_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "job-%05lld", static_cast<long long>(index));
  return name;
}

std::int64_t steady_ns(SteadyClock::time_point at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

// --- the write phase -------------------------------------------------------------------------

int phase_write(const Args& args) {
  const fs::path root = arg(args, "root", "");
  const std::int64_t jobs = int_arg(args, "jobs", 100);
  const auto interval = std::chrono::milliseconds(int_arg(args, "interval-ms", 2000));
  std::mutex mutex;
  std::condition_variable changed;
  std::int64_t ready = 0;
  bool go = false;
  std::string failure;
  // landed[i]: (global step, steady ns) of job i's steps after step 0.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> landed(jobs);
  std::vector<std::thread> writers;
  for (std::int64_t i = 0; i < jobs; ++i) {
    writers.emplace_back([&, i] {
      rulestream::JobSimulatorOptions options;
      options.output = root / job_name(i);
      options.steps = int_arg(args, "steps", 30);
      options.layers = 2;  // 11 records of 16 floats a step: a small job
      options.tensor_size = 16;
      options.seed = static_cast<std::uint64_t>(i);
      options.step_delay = interval;
      options.on_step_written = [&, i](const rulestream::SimulatedStep& step) {
        if (step.global_step != 0) {
          landed[i].emplace_back(step.global_step, steady_ns(SteadyClock::now()));
          return;
        }
        std::unique_lock lock(mutex);
        ++ready;
        changed.notify_all();
        changed.wait(lock, [&] { return go; });
        lock.unlock();
        // Spread evenly over the interval: a steady rate of jobs / interval steps a second.
        std::this_thread::sleep_for(interval * i / jobs);
      };
      try {
        rulestream::JobSimulator(options).run();
      } catch (const std::exception& error) {
        std::lock_guard lock(mutex);
        if (failure.empty()) failure = job_name(i) + ": " + error.what();
        ++ready;  // never leave the driver waiting for a writer that died
        changed.notify_all();
      }
    });
  }
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return ready == jobs; });
  }
  std::cout << "ready" << std::endl;  // the serve phase waits for the service to follow them all
  std::string line;
  std::getline(std::cin, line);
  {
    std::lock_guard lock(mutex);
    go = true;
  }
  changed.notify_all();
  for (auto& writer : writers) writer.join();
  if (!failure.empty()) {
    std::cerr << "serve_live_e2e: writing failed: " << failure << "\n";
    return 1;
  }
  std::ofstream out(arg(args, "times", ""));
  for (std::int64_t i = 0; i < jobs; ++i) {
    for (const auto& [step, at] : landed[i]) out << i << " " << step << " " << at << "\n";
  }
  return out ? 0 : 1;
}

// --- the serve phase -------------------------------------------------------------------------

// When each (job, step) first had an AllZero event at the service sink, in steady ns.
class LatencySink final : public rulestream::Sink {
 public:
  std::string describe() const override { return "latency probe"; }
  void write(const rulestream::RuleEvent& event) override {
    if (event.kind != rulestream::RuleEvent::Kind::ConditionMet || event.rule != "AllZero") return;
    const std::int64_t now = steady_ns(SteadyClock::now());
    const std::string job = fs::path(event.trial).filename().string();
    std::lock_guard lock(mutex_);
    if (arrived_.try_emplace({job, event.global_step}, now).second && event.global_step == 0) {
      ++jobs_at_step_0_;
    }
  }
  void flush() override {}
  std::int64_t jobs_at_step_0() const {
    std::lock_guard lock(mutex_);
    return jobs_at_step_0_;
  }
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> arrived() const {
    std::lock_guard lock(mutex_);
    return arrived_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> arrived_;
  std::int64_t jobs_at_step_0_ = 0;
};

// The writers, as a child whose stdout says "ready" and whose stdin says "go".
class WriterProcess {
 public:
  explicit WriterProcess(const std::vector<std::string>& phase_args) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2 failed");
    }
    std::vector<std::string> strings{"/proc/self/exe"};
    strings.insert(strings.end(), phase_args.begin(), phase_args.end());
    std::vector<char*> argv;
    for (auto& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::cout.flush();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(to_child[0], STDIN_FILENO);
      ::dup2(from_child[1], STDOUT_FILENO);
      ::execv("/proc/self/exe", argv.data());
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    to_child_ = to_child[1];
    from_child_ = from_child[0];
  }
  ~WriterProcess() {
    if (to_child_ >= 0) ::close(to_child_);
    if (from_child_ >= 0) ::close(from_child_);
    if (pid_ > 0) wait();
  }
  // Until the child says "ready" (false: it ended first).
  bool wait_ready() {
    std::string said;
    char c = 0;
    while (::read(from_child_, &c, 1) == 1) {
      if (c == '\n') return said == "ready";
      said += c;
    }
    return false;
  }
  void go() {
    const char line[] = "go\n";
    if (::write(to_child_, line, sizeof line - 1) != sizeof line - 1) {
      throw std::runtime_error("cannot tell the writers to go");
    }
  }
  // The child's exit status; its CPU time in `usage`.
  int wait(rusage* usage = nullptr) {
    int status = 0;
    rusage ignored{};
    ::wait4(pid_, &status, 0, usage ? usage : &ignored);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
};

double seconds(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

double cpu_seconds(const rusage& usage) {
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

rusage own_usage() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage;
}

// This process's thread count (from /proc/self/status) and open descriptors.
std::int64_t thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Threads:")) return std::stoll(line.substr(8));
  }
  return -1;
}

std::int64_t descriptor_count() {
  std::int64_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return NAN;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

bool wait_until(const std::function<bool()>& condition, std::chrono::seconds limit) {
  const auto deadline = SteadyClock::now() + limit;
  while (!condition()) {
    if (SteadyClock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

int phase_serve(const Args& args) {
  using namespace rulestream;
  const fs::path root = arg(args, "root", "");
  const std::int64_t jobs = int_arg(args, "jobs", 100);
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string raised = raise_open_file_limit();
  if (!raised.empty()) std::cerr << "serve_live_e2e: " << raised << "\n";

  JobServiceOptions options;
  options.roots = {root};
  RuleConfig all_zero{"", "AllZero", {{"threshold", "0"}}};
  options.base.rules = {all_zero, RuleConfig{"", "VanishingGradient", {}}};
  options.base.sinks = {SinkConfig{.name = "latency probe", .type = "stdout"}};
  options.base.poll_interval = std::chrono::milliseconds(int_arg(args, "poll-ms", 1000));
  options.base.max_memory = std::size_t{64} << 20;  // serve's default --max-memory
  options.max_running = static_cast<std::size_t>(int_arg(args, "max-running", jobs));
  options.history = static_cast<std::size_t>(jobs);
  options.idle_timeout = std::chrono::minutes(10);
  options.share_inotify = int_arg(args, "own-inotify", 0) == 0;
  options.inotify_rescan_interval = std::chrono::milliseconds(int_arg(args, "rescan-ms", 30000));
  auto probe = std::make_shared<LatencySink>();
  std::ostringstream job_output;  // a job's own stdout sinks: none here
  std::mutex log_mutex;
  std::string first_problem;
  const auto service_start = SteadyClock::now();
  JobService service(std::move(options), {probe}, job_output, [&](const std::string& line) {
    if (line.starts_with("found job")) return;
    std::lock_guard lock(log_mutex);
    if (first_problem.empty()) first_problem = line;
  });
  service.start();

  const fs::path times = root.string() + ".times";
  WriterProcess writers({"--phase", "write", "--root", root.string(), "--jobs",
                         std::to_string(jobs), "--steps", arg(args, "steps", "30"), "--interval-ms",
                         arg(args, "interval-ms", "2000"), "--times", times.string()});
  if (!writers.wait_ready()) throw std::runtime_error("the writers ended before step 0");
  // Every job found, started, and its watcher past its first scan (step 0's event is there).
  const bool following =
      wait_until([&] { return probe->jobs_at_step_0() == jobs; }, std::chrono::minutes(10));
  const double follow_all_s =
      std::chrono::duration<double>(SteadyClock::now() - service_start).count();
  if (!following) throw std::runtime_error("the service did not follow every job in 10 minutes");

  const rusage before = own_usage();
  const auto live_start = SteadyClock::now();
  std::atomic<bool> sampling{true};
  std::int64_t peak_threads = 0;
  std::int64_t peak_descriptors = 0;
  std::thread sampler([&] {
    while (sampling) {
      peak_threads = std::max(peak_threads, thread_count());
      peak_descriptors = std::max(peak_descriptors, descriptor_count());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  writers.go();
  rusage writer_usage{};
  const int written = writers.wait(&writer_usage);
  const bool finished = wait_until(
      [&] {
        const auto states = service.registry().count_by_state();
        const auto done = states.find(JobState::Finished);
        return done != states.end() && static_cast<std::int64_t>(done->second) == jobs;
      },
      std::chrono::minutes(5));
  const double live_s = std::chrono::duration<double>(SteadyClock::now() - live_start).count();
  const rusage after = own_usage();
  sampling = false;
  sampler.join();
  if (written != 0) throw std::runtime_error("the writers failed");
  service.stop();

  const auto arrived = probe->arrived();
  std::vector<double> latency_ms;
  std::int64_t expected = 0;
  std::ifstream landed(times);
  for (std::int64_t job = 0, step = 0, at = 0; landed >> job >> step >> at;) {
    ++expected;
    const auto found = arrived.find({job_name(job), step});
    if (found != arrived.end()) latency_ms.push_back(static_cast<double>(found->second - at) / 1e6);
  }
  fs::remove(times);
  std::sort(latency_ms.begin(), latency_ms.end());
  const double cpu = cpu_seconds(after) - cpu_seconds(before);
  std::cout << "jobs=" << jobs << " steps=" << expected
            << " missing=" << expected - static_cast<std::int64_t>(latency_ms.size())
            << " p50_ms=" << percentile(latency_ms, 0.50)
            << " p90_ms=" << percentile(latency_ms, 0.90)
            << " p99_ms=" << percentile(latency_ms, 0.99)
            << " max_ms=" << (latency_ms.empty() ? NAN : latency_ms.back())
            << " follow_all_s=" << follow_all_s << " live_s=" << live_s << " cpu_s=" << cpu
            << " cpu_pct=" << 100.0 * cpu / live_s << " writer_cpu_s=" << cpu_seconds(writer_usage)
            << " peak_rss_mib=" << static_cast<double>(after.ru_maxrss) / 1024.0
            << " peak_threads=" << peak_threads << " peak_fds=" << peak_descriptors
            << " finished=" << (finished ? 1 : 0) << "\n";
  if (!first_problem.empty())
    std::cerr << "serve_live_e2e: service said: " << first_problem << "\n";
  return 0;
}

// --- the driver ------------------------------------------------------------------------------

int drive(const Args& args) {
  const fs::path out = arg(args, "out", (fs::temp_directory_path() / "serve_live_e2e").string());
  const std::string steps = arg(args, "steps", "30");
  const std::string interval = arg(args, "interval-ms", "2000");
  const std::string poll = arg(args, "poll-ms", "1000");
  std::cout
      << "## serve: live jobs followed by one instance (" << steps << " steps a job, one every "
      << interval << " ms, jobs staggered; poll " << poll << " ms; rescan "
      << arg(args, "rescan-ms", "30000") << " ms; "
      << (arg(args, "own-inotify", "0") == "0" ? "one shared inotify instance"
                                               : "an inotify instance per job")
      << ")\n\n"
      << "| jobs | steps timed | missing | p50 | p90 | p99 | max | to follow all | CPU "
         "(live) | writers' CPU | peak RSS | peak threads | peak fds | load before / after |\n"
      << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
         "|\n";
  std::istringstream counts(arg(args, "jobs", "100,1000"));
  for (std::string jobs; std::getline(counts, jobs, ',');) {
    const std::string load = load_average();
    std::vector<std::string> phase{
        "--phase",       "serve",  "--root",    (out / ("jobs-" + jobs)).string(),
        "--jobs",        jobs,     "--steps",   steps,
        "--interval-ms", interval, "--poll-ms", poll};
    for (const std::string passed : {"max-running", "rescan-ms", "own-inotify"}) {
      if (args.count(passed)) phase.insert(phase.end(), {"--" + passed, args.at(passed)});
    }
    const auto result = rulestream::bench::run_phase(phase);
    const auto value = [&](const std::string& key) { return result.values.at(key); };
    std::cout << "| " << jobs << " | " << value("steps") << " | " << value("missing") << " | "
              << value("p50_ms") << " ms | " << value("p90_ms") << " ms | " << value("p99_ms")
              << " ms | " << value("max_ms") << " ms | " << value("follow_all_s") << " s | "
              << value("cpu_s") << " s in " << value("live_s") << " s (" << value("cpu_pct")
              << "%) | " << value("writer_cpu_s") << " s | " << value("peak_rss_mib") << " MiB | "
              << value("peak_threads") << " | " << value("peak_fds") << " | " << load << " / "
              << load_average() << " |\n"
              << std::flush;
    fs::remove_all(out / ("jobs-" + jobs));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = rulestream::bench::parse_args(argc, argv);
    const std::string phase = arg(args, "phase", "");
    if (phase == "write") return phase_write(args);
    if (phase == "serve") return phase_serve(args);
    return drive(args);
  } catch (const std::exception& error) {
    std::cerr << "serve_live_e2e: " << error.what() << "\n";
    return 2;
  }
}
