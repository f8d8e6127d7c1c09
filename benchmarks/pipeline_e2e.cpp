// End-to-end benchmarks of the streaming pipeline (issue 3), reported as ratios from one run:
//
// - replay of two generated jobs (a large-tensor job and a small-tensor job) with the four
//   built-in rules on, next to the read ceiling: a plain read of the same event files with the
//   same number of threads, page cache warm;
// - peak RSS of each replay, from wait4() on a child process that does nothing else;
// - the same replay with every built-in rule, against the four (issue 4); SimilarAcrossRuns
//   compares the job with itself, its worst case, and with --other-run also with a second run
//   of the same job from another seed (every value differs), for diagnosis;
// - scaling with the job's length: every rule over a job of tiny tensors, N / 10 steps
//   against N, compared per step (--only scaling, --scaling-steps N);
// - live latency: from a step's index files landing (the simulator's on_step_written, called
//   once every worker's end_step has renamed its index file into place) to that step's rule
//   event reaching a sink, with the pipeline following the folder while the job is written.
//
// The driver (no --phase) never generates or reads data itself: every phase runs in a child
// (this program, exec'd again with --phase), so the driver's own memory stays a few MB and a
// child's ru_maxrss is the phase's alone. Linux carries the pre-exec RSS into a child's
// maxrss, so the driver's footprint is the floor of every reported figure; it is printed too.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "benchmarks/child_phase.hpp"
#include "core/memory/reader_slots_mutex.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "rules/default_rules.hpp"
#include "rules/rule_registry.hpp"
#include "sinks/sink.hpp"

namespace {

using rulestream::bench::arg;
using rulestream::bench::Args;
using rulestream::bench::ChildResult;
using rulestream::bench::finish_phase;
using rulestream::bench::int_arg;
using rulestream::bench::load_average;
using rulestream::bench::median;
using rulestream::bench::num;
using rulestream::bench::parse_args;
using rulestream::bench::pin_to_cpus;
using rulestream::bench::run_phase;
using rulestream::bench::RunningPhase;
using rulestream::bench::start_phase;

namespace fs = std::filesystem;
using rulestream::JobSimulator;
using rulestream::JobSimulatorOptions;
using rulestream::PipelineConfig;
using rulestream::RuleConfig;
using rulestream::RuleEvent;
using rulestream::RulePipeline;
using rulestream::RuleStatus;
using rulestream::Sink;
using SteadyClock = std::chrono::steady_clock;

// --- the two jobs -------------------------------------------------------------------------

JobSimulatorOptions job_options(const std::string& kind, const fs::path& out, std::int64_t steps,
                                int workers, std::uint64_t seed = 0) {
  JobSimulatorOptions options;
  options.seed = seed;
  options.output = out;
  options.workers = workers;
  options.steps = steps;
  options.save_interval = 1;
  if (kind == "large") {
    // fc1..fc3: 3 weights, 3 weight gradients, 4 ReLU inputs/outputs of 65,536 floats, plus 40
    // extra tensors of the same size: 50 tensors of 256 KiB per worker and step (with 6 biases
    // of 256 floats and the loss: 57 records).
    options.layers = 3;
    options.tensor_size = 65536;
    options.extra_tensors = 40;
    options.extra_tensor_size = 65536;
  } else if (kind == "small") {
    // 2,000 tensors of 256 floats, plus fc1..fc2 of 256 floats: 2,011 records per worker and
    // step, where per-tensor overhead dominates.
    options.layers = 2;
    options.tensor_size = 256;
    options.extra_tensors = 2000;
    options.extra_tensor_size = 256;
  } else if (kind == "long") {
    // fc1..fc2 of 16 floats: 11 records per worker and step, so that the per-step work of the
    // pipeline and the rules is all there is to measure (scaling with the number of steps).
    options.layers = 2;
    options.tensor_size = 16;
  } else {
    throw std::invalid_argument("unknown job kind: " + kind);
  }
  return options;
}

// Event-file bytes the job will take, a little over (biases are counted at 256 elements, the
// most these jobs give them; record framing and names at 200 bytes a record).
std::uint64_t estimated_bytes(const JobSimulatorOptions& options) {
  const std::int64_t layers = options.layers;
  const std::int64_t big = (2 * layers + 2 * (layers - 1)) * options.tensor_size;
  const std::int64_t small = 2 * layers * 256 + options.extra_tensors * options.extra_tensor_size;
  const std::int64_t records = 6 * layers - 1 + options.extra_tensors;
  const std::int64_t per_step = 4 * (big + small + 1) + 200 * records;
  return static_cast<std::uint64_t>(per_step * options.steps * options.workers);
}

std::vector<RuleConfig> four_rules(bool all_zero_fires_always) {
  std::vector<RuleConfig> rules;
  rules.push_back({"", "VanishingGradient", {}});
  rules.push_back({"", "ExplodingTensor", {}});
  RuleConfig all_zero{"", "AllZero", {}};
  // Threshold 0%: every tensor qualifies, so the rule fires at every step (latency probe).
  if (all_zero_fires_always) all_zero.parameters["threshold"] = "0";
  rules.push_back(all_zero);
  rules.push_back({"", "LossNotDecreasing", {}});
  return rules;
}

// Every built-in rule with its default parameters, except where a rule needs one to run at all:
// TensorVariance has no default threshold (a bound no healthy tensor reaches), SimilarAcrossRuns
// compares with another trial (the same job again: config.paths gets it twice). The judgement
// rules of the logdirs' default set (issue 42) are left out but for NonFinite: the set stays
// the one every figure below was measured with; alert_quality and tensorboard_e2e measure them.
std::vector<RuleConfig> every_rule() {
  std::vector<RuleConfig> rules;
  const auto& judgement = rulestream::default_rule_names();
  for (const rulestream::RuleSpec* spec : rulestream::RuleRegistry::builtin().all()) {
    if (spec->name != "NonFinite" &&
        std::find(judgement.begin(), judgement.end(), spec->name) != judgement.end()) {
      continue;
    }
    RuleConfig rule{"", spec->name, {}};
    if (spec->name == "TensorVariance") rule.parameters["max_threshold"] = "1e30";
    rules.push_back(rule);
  }
  return rules;
}

int thread_count(const Args& args) {
  const std::int64_t threads = int_arg(args, "threads", 0);
  return threads > 0 ? static_cast<int>(threads)
                     : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

// User and system CPU time of this process so far (the phase runs in a child of its own).
double process_cpu_seconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& time) {
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// --- phases (each in its own process) -----------------------------------------------------

int phase_generate(const Args& args) {
  const auto options = job_options(arg(args, "kind", ""), arg(args, "out", ""),
                                   int_arg(args, "steps", 0), int_arg(args, "workers", 2),
                                   static_cast<std::uint64_t>(int_arg(args, "seed", 0)));
  const auto start = SteadyClock::now();
  const auto summary = JobSimulator(options).run();
  std::cout << "seconds=" << seconds_since(start) << " event_bytes=" << summary.event_bytes
            << " records=" << summary.records << " saved_steps=" << summary.saved_steps
            << " tensor_names=" << summary.tensor_count << "\n";
  return 0;
}

std::vector<fs::path> event_files(const fs::path& trial) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(trial / "events")) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void check_errno(bool ok, const std::string& what, const fs::path& path) {
  if (!ok) throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

// read() into one reused buffer per thread: the kernel's copy is all there is.
std::uint64_t read_file(const fs::path& path, std::vector<char>& buffer) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check_errno(fd >= 0, "open", path);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    check_errno(got >= 0, "read", path);
    if (got == 0) break;
    total += static_cast<std::uint64_t>(got);
  }
  ::close(fd);
  return total;
}

// mmap, then either one byte read per page (`every_byte` false: the page faults and page-table
// work, no data moved) or every byte summed as 8-byte words (what a decoder must at least do),
// then munmap.
std::uint64_t map_file(const fs::path& path, bool every_byte, std::uint64_t& checksum) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check_errno(fd >= 0, "open", path);
  struct stat info {};
  check_errno(::fstat(fd, &info) == 0, "fstat", path);
  const auto size = static_cast<std::size_t>(info.st_size);
  if (size > 0) {
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    check_errno(mapped != MAP_FAILED, "mmap", path);
    if (every_byte) {
      const auto* bytes = static_cast<const unsigned char*>(mapped);
      std::uint64_t sum = 0;
      std::size_t i = 0;
      for (; i + 8 <= size; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, bytes + i, 8);
        sum += word;
      }
      for (; i < size; ++i) sum += bytes[i];
      checksum += sum;
    } else {
      const auto* bytes = static_cast<const volatile unsigned char*>(mapped);
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      for (std::size_t i = 0; i < size; i += page) checksum += bytes[i];
    }
    ::munmap(mapped, size);
  }
  ::close(fd);
  return size;
}

// Touches `mib` MiB of fresh memory a huge page at a time, frees it, and prints the rate. On a
// machine whose memory is its own that is 10-25 GB/s. On a VM whose balloon reports free memory
// to its host (virtio-balloon free page reporting, as on the development VM), memory the guest
// freed a few seconds before has gone back to the host, and touching it again waits for the
// host to fault it in: 0.4-0.7 GB/s there. A replay's store is fresh memory, so on such a VM a
// run's time depends on how much of what it touches the host took back meanwhile (and the
// host's work of taking it back probably falls on whatever runs next). The sweep prints this
// rate once, so that a reader knows which kind of machine the figures are from.
int phase_fresh_memory(const Args& args) {
  const std::size_t bytes = static_cast<std::size_t>(int_arg(args, "mib", 256)) << 20;
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  void* mapped =
      ::mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::runtime_error("fresh-memory: mmap failed");
  auto* start = reinterpret_cast<volatile char*>(
      (reinterpret_cast<std::uintptr_t>(mapped) + kHuge - 1) / kHuge * kHuge);
  static_cast<void>(::madvise(const_cast<char*>(start), bytes, MADV_HUGEPAGE));
  const auto begin = SteadyClock::now();
  for (std::size_t offset = 0; offset < bytes; offset += 4096) start[offset] = 1;
  const double seconds = seconds_since(begin);
  ::munmap(mapped, bytes + kHuge);
  std::cout << "seconds=" << seconds
            << " gb_per_second=" << static_cast<double>(bytes) / seconds / 1e9 << "\n";
  return 0;
}

// Reads every event file with `threads` threads taking files in turn.
// method: read | mmap-touch (one byte per page) | mmap-read (every byte).
int phase_ceiling(const Args& args) {
  const fs::path trial = arg(args, "trial", "");
  const std::string method = arg(args, "method", "read");
  const auto buffer_bytes = static_cast<std::size_t>(int_arg(args, "buffer-kib", 1024) * 1024);
  const int threads = thread_count(args);
  const auto files = event_files(trial);
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> checksum{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  const auto start = SteadyClock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      try {
        std::vector<char> buffer(method == "read" ? buffer_bytes : 0);
        std::uint64_t mine = 0;
        std::uint64_t sum = 0;
        for (std::size_t i = next++; i < files.size(); i = next++) {
          mine += method == "read" ? read_file(files[i], buffer)
                                   : map_file(files[i], method == "mmap-read", sum);
        }
        bytes += mine;
        checksum += sum;
      } catch (...) {
        std::lock_guard lock(error_mutex);
        error = std::current_exception();
      }
    });
  }
  for (auto& thread : pool) thread.join();
  const double seconds = seconds_since(start);
  if (error) std::rethrow_exception(error);
  std::cout << "seconds=" << seconds << " event_bytes=" << bytes.load() << " files=" << files.size()
            << " checksum=" << checksum.load() << "\n";
  return 0;
}

// Counts what reaches it, and fingerprints each rule's events in the order they arrive: the
// replay's sink. Runs with different thread counts must give the same events in the same order
// for every rule (rules run in parallel, so events of different rules interleave as they may).
class CountingSink final : public Sink {
 public:
  std::string describe() const override { return "counting"; }
  void write(const RuleEvent& event) override {
    if (event.kind == RuleEvent::Kind::ConditionMet) ++conditions_;
    std::string text = std::to_string(static_cast<int>(event.kind)) + "|" +
                       std::to_string(event.global_step) + "|" + event.message;
    for (const std::string& tensor : event.tensors) text += "|" + tensor;
    if (event.kind == RuleEvent::Kind::Status) {
      text += "|" + std::to_string(static_cast<int>(event.status.value_or(RuleStatus::Error))) +
              "|" + std::to_string(event.steps_evaluated) + "|" + std::to_string(event.times_fired);
    }
    std::lock_guard lock(mutex_);
    std::uint64_t& hash = fingerprints_[event.rule_configuration];
    for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    hash = (hash ^ 0xffU) * 1099511628211ULL;  // an event's end
  }
  void flush() override {}
  std::int64_t conditions() const { return conditions_; }
  // Every rule's fingerprint, combined in rule-name order: equal for equal event streams.
  std::uint64_t fingerprint() const {
    std::lock_guard lock(mutex_);
    std::uint64_t combined = 14695981039346656037ULL;
    for (const auto& [rule, hash] : fingerprints_) {
      for (const char c : rule)
        combined = (combined ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
      combined = (combined ^ hash) * 1099511628211ULL;
    }
    return combined;
  }

 private:
  std::atomic<std::int64_t> conditions_{0};
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> fingerprints_;
};

int phase_replay(const Args& args) {
  PipelineConfig config;
  config.paths = {arg(args, "trial", "")};
  config.follow = false;
  // "four" (issue 3's), "all" (issue 4's twenty), or, to tell apart what the second job costs,
  // "all-but-similar": the nineteen that read one trial (diagnosis only; not in the tables).
  const std::string which = arg(args, "rules", "four");
  if (which != "four" && which != "all" && which != "all-but-similar") {
    throw std::invalid_argument("--rules must be four, all or all-but-similar, not " + which);
  }
  const bool all_rules = which == "all";
  config.rules = which == "four" ? four_rules(false) : every_rule();
  if (which == "all-but-similar") {
    std::erase_if(config.rules,
                  [](const RuleConfig& rule) { return rule.rule == "SimilarAcrossRuns"; });
  }
  // SimilarAcrossRuns' other trial: the same job again, its worst case (every value equal, so
  // every value of both runs is read and compared). Diagnosis only (not in the tables):
  // --other-trial names another run to compare with.
  if (all_rules) config.paths.push_back(arg(args, "other-trial", config.paths.front()));
  config.threads = thread_count(args);
  // Diagnosis only: the default (512 MiB) is what the figures use.
  if (args.contains("max-memory-mib")) {
    config.max_memory = static_cast<std::size_t>(int_arg(args, "max-memory-mib", 512)) << 20;
  }
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<CountingSink>());
  const CountingSink& counting = static_cast<const CountingSink&>(*sinks.back());
  const double cpu_before = process_cpu_seconds();
  const auto start = SteadyClock::now();
  RulePipeline pipeline(config, std::move(sinks));
  const auto report = pipeline.run();
  const double seconds = seconds_since(start);
  const double cpu_seconds = process_cpu_seconds() - cpu_before;
  std::int64_t evaluated = 0;
  // The rules that ended in Error, in configuration order ("none" when none did); with
  // --explain-errors, why each did, on stderr.
  std::string error_rules;
  const bool explain = args.contains("explain-errors");
  for (const auto& status : report.statuses) {
    evaluated += status.steps_evaluated;
    if (status.status == RuleStatus::Error) {
      error_rules += (error_rules.empty() ? "" : ",") + status.rule_configuration;
      if (explain) {
        std::cerr << "pipeline_e2e: " << status.rule_configuration
                  << " ended in Error: " << status.message << "\n";
      }
    }
  }
  if (error_rules.empty()) error_rules = "none";
  // Rates count the job's event-file bytes, the bytes the ceilings read, whatever share of
  // them the pipeline had to read (read_bytes).
  std::uint64_t job_bytes = 0;
  for (const auto& file : event_files(config.paths.front())) job_bytes += fs::file_size(file);
  std::cout
      << "seconds=" << seconds << " event_bytes=" << job_bytes
      << " read_bytes=" << report.event_bytes << " tensors=" << report.tensors_decoded
      << " index_files=" << report.index_files << " steps=" << report.steps_released
      << " evaluated=" << evaluated << " conditions=" << report.conditions_met
      << " problems=" << report.problems.size() << " rule_errors=" << (report.rule_errors ? 1 : 0)
      << " error_rules=" << error_rules << " events_fingerprint=" << counting.fingerprint()
      << " cpu_seconds=" << cpu_seconds
      << " assembler_seconds=" << std::chrono::duration<double>(report.assembler_busy).count()
      << " threads=" << config.threads << " readers_held_up_seconds="
      << std::chrono::duration<double>(rulestream::ReaderSlotsMutex::readers_held_up()).count()
      << " writers_waited_seconds="
      << std::chrono::duration<double>(rulestream::ReaderSlotsMutex::writers_waited()).count()
      << " other_trials_waited_seconds="
      << std::chrono::duration<double>(report.other_trials_waited).count()
      << " other_trials_refreshes=" << report.other_trials_refreshes << " rule_seconds=";
  // Each rule's time evaluating steps, as Name:seconds,Name:seconds (rules run in parallel).
  for (std::size_t i = 0; i < report.rule_busy.size(); ++i) {
    std::cout << (i ? "," : "") << report.statuses.at(i).rule << ":"
              << std::chrono::duration<double>(report.rule_busy[i]).count();
  }
  // Each rule's serial node (all its evaluating, or only putting outcomes in order for a rule
  // whose steps are evaluated in parallel).
  std::cout << " rule_serial_seconds=";
  for (std::size_t i = 0; i < report.rule_serial_busy.size(); ++i) {
    std::cout << (i ? "," : "") << report.statuses.at(i).rule << ":"
              << std::chrono::duration<double>(report.rule_serial_busy[i]).count();
  }
  std::cout << "\n";
  return 0;
}

// Records when each step's AllZero event arrives (the first one per step), on both clocks: the
// steady clock to compare with on_step_written, the real-time clock to compare with file times.
class LatencySink final : public Sink {
 public:
  struct Arrival {
    SteadyClock::time_point steady;
    std::chrono::system_clock::time_point system;
  };

  std::string describe() const override { return "latency probe"; }
  void write(const RuleEvent& event) override {
    if (event.kind != RuleEvent::Kind::ConditionMet || event.rule != "AllZero") return;
    const Arrival now{SteadyClock::now(), std::chrono::system_clock::now()};
    std::lock_guard lock(mutex_);
    arrived_.try_emplace(event.global_step, now);
  }
  void flush() override {}
  std::map<std::int64_t, Arrival> arrived() const {
    std::lock_guard lock(mutex_);
    return arrived_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, Arrival> arrived_;
};

// The latest modification time of each step's index files (index/<step>/<step>_<worker>.json),
// by global step. The kernel stamps it from its coarse clock at the last write to the temporary
// file, before the rename: at or before the landing, so latencies measured from it are upper
// bounds.
std::map<std::int64_t, std::chrono::system_clock::time_point> index_mtimes(const fs::path& trial) {
  std::map<std::int64_t, std::chrono::system_clock::time_point> latest;
  for (const auto& entry : fs::recursive_directory_iterator(trial / "index")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !name.ends_with(".json") || name.size() < 12) continue;
    struct stat info {};
    if (::stat(entry.path().c_str(), &info) != 0) continue;
    const auto at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::seconds(info.st_mtim.tv_sec) +
            std::chrono::nanoseconds(info.st_mtim.tv_nsec)));
    const std::int64_t step = std::stoll(name.substr(0, 12));
    auto [it, added] = latest.try_emplace(step, at);
    if (!added) it->second = std::max(it->second, at);
  }
  return latest;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return NAN;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

int phase_latency(const Args& args) {
  const fs::path out = arg(args, "out", "");
  fs::create_directories(out);
  PipelineConfig config;
  config.paths = {out.string()};
  config.follow = true;
  config.rules = four_rules(true);
  config.threads = thread_count(args);
  auto probe_owner = std::make_unique<LatencySink>();
  const LatencySink* probe = probe_owner.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(probe_owner));
  RulePipeline pipeline(config, std::move(sinks));
  std::exception_ptr pipeline_error;
  rulestream::PipelineReport report;
  std::thread runner([&] {
    try {
      report = pipeline.run();
    } catch (...) {
      pipeline_error = std::current_exception();
    }
  });
  // Let the watcher's initial scan finish so that every step is seen by inotify, as live.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  JobSimulatorOptions options;
  options.output = out;
  options.workers = static_cast<int>(int_arg(args, "workers", 2));
  options.steps = int_arg(args, "steps", 200);
  options.layers = 3;
  options.tensor_size = int_arg(args, "tensor-size", 65536);
  options.step_delay = std::chrono::milliseconds(int_arg(args, "delay-ms", 20));
  std::map<std::int64_t, SteadyClock::time_point> landed;
  options.on_step_written = [&](const rulestream::SimulatedStep& step) {
    landed.emplace(step.global_step, SteadyClock::now());
  };
  try {
    JobSimulator(options).run();
  } catch (...) {
    pipeline.request_stop();
    runner.join();
    throw;
  }
  runner.join();
  if (pipeline_error) std::rethrow_exception(pipeline_error);

  const auto arrived = probe->arrived();
  const auto mtimes = index_mtimes(out);
  std::vector<double> from_callback_ms;
  std::vector<double> from_mtime_ms;
  std::int64_t missing = 0;
  for (const auto& [step, at] : landed) {
    const auto it = arrived.find(step);
    if (it == arrived.end()) {
      ++missing;
      continue;
    }
    from_callback_ms.push_back(
        std::chrono::duration<double, std::milli>(it->second.steady - at).count());
    if (const auto file = mtimes.find(step); file != mtimes.end()) {
      from_mtime_ms.push_back(
          std::chrono::duration<double, std::milli>(it->second.system - file->second).count());
    }
  }
  auto print = [](const std::string& prefix, std::vector<double> values) {
    std::sort(values.begin(), values.end());
    std::cout << " " << prefix << "p50_ms=" << percentile(values, 0.50) << " " << prefix
              << "p90_ms=" << percentile(values, 0.90) << " " << prefix
              << "p99_ms=" << percentile(values, 0.99) << " " << prefix
              << "max_ms=" << (values.empty() ? NAN : values.back()) << " " << prefix
              << "min_ms=" << (values.empty() ? NAN : values.front());
  };
  std::cout << "steps=" << landed.size() << " missing=" << missing;
  print("", from_callback_ms);
  print("mtime_", from_mtime_ms);
  std::cout << " problems=" << report.problems.size() << "\n";
  return 0;
}

// --- the driver -----------------------------------------------------------------------------

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

// Issue 23's measure: what share of a replay's CPU time each serial node (the step assembler,
// each rule's node) spends, and the speedup the largest share allows on 16 threads (Amdahl:
// 1 / (s + (1 - s) / 16)): a serial node's work cannot spread over more cores.
// `work` gives the CPU time (by default the same replay): a one-thread replay's is the work
// itself, where more threads add the time oneTBB's idle threads spin.
struct SerialShares {
  double cpu = 0;                                     // the work's CPU time
  std::vector<std::pair<double, std::string>> nodes;  // each node's share of it, largest first

  double bound_at_16() const {
    const double largest = nodes.front().first;
    return 1.0 / (largest + (1.0 - largest) / 16);
  }
};

SerialShares serial_shares(const ChildResult& replay, const ChildResult* work = nullptr) {
  SerialShares shares;
  shares.cpu = num(work != nullptr ? *work : replay, "cpu_seconds");
  const auto add = [&](double seconds, std::string name) {
    shares.nodes.emplace_back(shares.cpu > 0 ? seconds / shares.cpu : 1.0, std::move(name));
  };
  add(num(replay, "assembler_seconds"), "assembler");
  std::istringstream entries(replay.values.at("rule_serial_seconds"));
  for (std::string entry; std::getline(entries, entry, ',');) {
    const auto colon = entry.rfind(':');
    if (colon != std::string::npos) add(std::stod(entry.substr(colon + 1)), entry.substr(0, colon));
  }
  std::sort(shares.nodes.rbegin(), shares.nodes.rend());
  return shares;
}

// `bounds`: when the replay is one round's of several, every round's bound (the same measure,
// each from its own round's runs), whose range is printed beside this round's.
void print_serial_fraction(const std::string& label, const ChildResult& replay,
                           const ChildResult* work = nullptr,
                           const std::vector<double>& bounds = {}) {
  const SerialShares shares = serial_shares(replay, work);
  std::cout << "serial fraction, " << label << " (busy / " << fixed(shares.cpu, 3) << " s of CPU):";
  for (const auto& [share, name] : shares.nodes) std::cout << " " << name << " " << fixed(share, 3);
  std::cout << "; Amdahl bound at 16 threads " << fixed(shares.bound_at_16(), 1) << "x";
  if (bounds.size() > 1) {
    std::cout << " (every round's: " << fixed(*std::min_element(bounds.begin(), bounds.end()), 1)
              << "-" << fixed(*std::max_element(bounds.begin(), bounds.end()), 1) << "x)";
  }
  // What the store's exclusive ingestion cost the threads that wanted to read meanwhile: the
  // bound above counts the assembler's own CPU time, not the readers it holds up.
  const double held_up = num(replay, "readers_held_up_seconds");
  const double thread_seconds = num(replay, "seconds") * num(replay, "threads");
  std::cout << "; readers held up by the store's writer " << fixed(held_up, 3) << " s ("
            << fixed(thread_seconds > 0 ? held_up / thread_seconds * 100 : 0.0, 1)
            << "% of the threads' time)";
  // And the other side: the writer's wait for the readers inside to leave, which is spent on
  // the assembler's serial node (it spins, then yields) and counts in its busy time above.
  const double waited = num(replay, "writers_waited_seconds");
  const double assembler = num(replay, "assembler_seconds");
  std::cout << "; the writer waited for readers " << fixed(waited, 4) << " s ("
            << fixed(assembler > 0 ? waited / assembler * 100 : 0.0, 0)
            << "% of the assembler's serial time)";
  // Threads that asked the trials rules compare with while another refreshed them: none
  // should, since those rules get their steps once the trials are loaded (the four rules
  // compare with no other trial: 0).
  const double other_waited = num(replay, "other_trials_waited_seconds");
  std::cout << "; threads waited for the trials compared with " << fixed(other_waited, 4) << " s ("
            << fixed(thread_seconds > 0 ? other_waited / thread_seconds * 100 : 0.0, 1)
            << "% of the threads' time)\n";
}

// The all-rules replay's time per rule ("Name:seconds,..." from a replay phase), busiest first.
void print_rule_times(const std::string& rule_seconds) {
  std::vector<std::pair<double, std::string>> rules;
  std::istringstream entries(rule_seconds);
  for (std::string entry; std::getline(entries, entry, ',');) {
    const auto colon = entry.rfind(':');
    if (colon == std::string::npos) continue;
    rules.emplace_back(std::stod(entry.substr(colon + 1)), entry.substr(0, colon));
  }
  std::sort(rules.rbegin(), rules.rend());
  std::cout << "time each rule spent evaluating, all rules, last repetition:";
  for (const auto& [seconds, name] : rules) std::cout << " " << name << " " << fixed(seconds, 3);
  std::cout << "\n\n";
}

// Generates a job of `kind` under `trial` from the simulator's `seed`, writes back what the
// generator left dirty (writeback under a measurement halves the read ceiling), then reads
// everything once so that every run finds it in the page cache.
void generate_job(const std::string& kind, const fs::path& trial, std::int64_t steps, int workers,
                  std::uint64_t seed, const std::string& threads) {
  if (fs::exists(trial)) fs::remove_all(trial);
  const auto generated = run_phase({"--phase", "generate", "--kind", kind, "--out", trial.string(),
                                    "--steps", std::to_string(steps), "--workers",
                                    std::to_string(workers), "--seed", std::to_string(seed)});
  std::cout << "generated " << trial.filename().string() << " (seed " << seed
            << "): " << fixed(num(generated, "event_bytes") / 1e9, 2) << " GB, "
            << generated.values.at("records") << " records in "
            << fixed(num(generated, "seconds"), 1) << " s\n";
  ::sync();
  run_phase(
      {"--phase", "ceiling", "--method", "read", "--trial", trial.string(), "--threads", threads});
}

// Generates one job, warms the page cache, then alternates ceiling and replay runs.
void bench_job(const std::string& kind, const fs::path& data, std::int64_t steps, int workers,
               int repetitions, const std::string& threads, bool keep, bool other_run) {
  const fs::path trial = data / (kind + "-job");
  // A second run of the same job from another seed, for SimilarAcrossRuns to compare with
  // (--other-run): every value differs, where the job compared with itself has every value
  // equal. Diagnosis only: the tables keep the job against itself, the rule's own worst case
  // (every value of both runs read and compared).
  const fs::path other_trial = data / (kind + "-other-run");
  const auto options = job_options(kind, trial, steps, workers);
  struct statvfs disk {};
  if (::statvfs(data.c_str(), &disk) == 0) {
    const auto free_bytes = static_cast<std::uint64_t>(disk.f_bavail) * disk.f_frsize;
    const std::uint64_t needed =
        estimated_bytes(options) * (other_run ? 2 : 1) + (std::uint64_t{1} << 30);
    if (free_bytes < needed) {
      throw std::runtime_error(kind + " job: ~" + std::to_string(needed >> 20) + " MiB needed, " +
                               std::to_string(free_bytes >> 20) + " MiB free under " +
                               data.string() + " (lower --" + kind + "-steps)");
    }
  }
  std::cout << "## " << kind << " job: " << workers << " workers x " << steps << " steps\n";
  generate_job(kind, trial, steps, workers, 0, threads);
  if (other_run) generate_job(kind, other_trial, steps, workers, 1, threads);
  // Each repetition runs the three plain reads and the replay back to back, so that a ratio
  // compares figures taken under the same load; medians over repetitions are reported, ratios
  // as the median of the per-repetition ratios.
  // The ceiling, as the issue defines it: the faster of read() and mmap touching every page.
  // Touching a page reads one byte of 4,096, so the faster of read() and mmap reading every byte
  // is reported beside it: the fastest way to bring every byte of the files to a core.
  std::vector<double> read_bps, map_bps, touch_bps, replay_bps, tensors_ps, rss;
  std::vector<double> ratios, every_byte_ratios;
  std::vector<double> all_rules_bps, all_rules_cost, all_rules_rss;
  std::string all_rules_conditions;
  std::vector<double> other_run_cost;  // --other-run: all rules, the other trial a different run
  std::string other_run_conditions;
  ChildResult last;
  ChildResult last_all_rules;
  auto rate = [](const ChildResult& result) {
    return num(result, "event_bytes") / num(result, "seconds");
  };
  for (int r = 0; r < repetitions; ++r) {
    auto ceiling_run = [&](const std::string& method) {
      return rate(run_phase({"--phase", "ceiling", "--method", method, "--trial", trial.string(),
                             "--threads", threads}));
    };
    read_bps.push_back(ceiling_run("read"));
    touch_bps.push_back(ceiling_run("mmap-touch"));
    map_bps.push_back(ceiling_run("mmap-read"));
    const auto replay =
        run_phase({"--phase", "replay", "--trial", trial.string(), "--threads", threads});
    replay_bps.push_back(rate(replay));
    const auto replay_all = run_phase(
        {"--phase", "replay", "--trial", trial.string(), "--threads", threads, "--rules", "all"});
    all_rules_bps.push_back(rate(replay_all));
    all_rules_cost.push_back(num(replay_all, "seconds") / num(replay, "seconds"));
    all_rules_rss.push_back(replay_all.max_rss_mib);
    all_rules_conditions = replay_all.values.at("conditions");
    if (other_run) {
      const auto replay_other =
          run_phase({"--phase", "replay", "--trial", trial.string(), "--threads", threads,
                     "--rules", "all", "--other-trial", other_trial.string()});
      other_run_cost.push_back(num(replay_other, "seconds") / num(replay, "seconds"));
      other_run_conditions = replay_other.values.at("conditions");
    }
    tensors_ps.push_back(num(replay, "tensors") / num(replay, "seconds"));
    rss.push_back(replay.max_rss_mib);
    ratios.push_back(replay_bps.back() / std::max(read_bps.back(), touch_bps.back()));
    every_byte_ratios.push_back(replay_bps.back() / std::max(read_bps.back(), map_bps.back()));
    std::cout << "  run " << r + 1 << ": read() " << fixed(read_bps.back() / 1e9, 2)
              << " GB/s, mmap one byte per page " << fixed(touch_bps.back() / 1e9, 2)
              << " GB/s, mmap every byte " << fixed(map_bps.back() / 1e9, 2) << " GB/s; replay "
              << fixed(replay_bps.back() / 1e9, 2) << " GB/s (" << fixed(num(replay, "seconds"), 2)
              << " s), " << fixed(tensors_ps.back() / 1e6, 3) << " M tensors/s, peak RSS "
              << fixed(replay.max_rss_mib, 0) << " MiB, ratio " << fixed(ratios.back() * 100, 1)
              << "% (every byte " << fixed(every_byte_ratios.back() * 100, 1) << "%); all rules "
              << fixed(all_rules_bps.back() / 1e9, 2) << " GB/s, "
              << fixed(all_rules_cost.back(), 2) << "x the four rules' time, peak RSS "
              << fixed(all_rules_rss.back(), 0) << " MiB";
    if (other_run) {
      std::cout << "; against another run " << fixed(other_run_cost.back(), 2) << "x";
    }
    std::cout << "; load " << load_average() << "\n";
    last = replay;
    last_all_rules = replay_all;
  }
  std::cout << "  replay report: tensors=" << last.values["tensors"]
            << " event_bytes=" << last.values["event_bytes"]
            << " index_files=" << last.values["index_files"] << " steps=" << last.values["steps"]
            << " evaluated=" << last.values["evaluated"]
            << " conditions=" << last.values["conditions"]
            << " problems=" << last.values["problems"]
            << " rule_errors=" << last.values["rule_errors"] << "\n";
  std::cout << "| job | read() | mmap, one byte per page | mmap, every byte | pipeline | "
               "ratio to ceiling | ratio to every-byte ceiling | tensors/s | peak RSS |\n"
            << "| " << kind << " | " << fixed(median(read_bps) / 1e9, 2) << " GB/s | "
            << fixed(median(touch_bps) / 1e9, 2) << " GB/s | " << fixed(median(map_bps) / 1e9, 2)
            << " GB/s | " << fixed(median(replay_bps) / 1e9, 2) << " GB/s | "
            << fixed(median(ratios) * 100, 1) << "% | " << fixed(median(every_byte_ratios) * 100, 1)
            << "% | " << fixed(median(tensors_ps) / 1e6, 3) << " M | "
            << fixed(*std::max_element(rss.begin(), rss.end()), 0) << " MiB |\n\n";
  std::cout << "| job | four rules | all " << every_rule().size()
            << " rules | time, all / four | peak RSS, all rules | conditions met, all rules |\n"
            << "| " << kind << " | " << fixed(median(replay_bps) / 1e9, 2) << " GB/s | "
            << fixed(median(all_rules_bps) / 1e9, 2) << " GB/s | "
            << fixed(median(all_rules_cost), 2) << "x | "
            << fixed(*std::max_element(all_rules_rss.begin(), all_rules_rss.end()), 0) << " MiB | "
            << all_rules_conditions << " |\n\n";
  if (other_run) {
    std::cout << "| job | time, all / four, SimilarAcrossRuns against another run (diagnosis) | "
                 "range | conditions met |\n"
              << "| " << kind << " | " << fixed(median(other_run_cost), 2) << "x | "
              << fixed(*std::min_element(other_run_cost.begin(), other_run_cost.end()), 2) << "-"
              << fixed(*std::max_element(other_run_cost.begin(), other_run_cost.end()), 2) << "x | "
              << other_run_conditions << " |\n\n";
  }
  print_rule_times(last_all_rules.values["rule_seconds"]);
  print_serial_fraction(kind + " job, four rules, last repetition", last);
  print_serial_fraction(kind + " job, all rules, last repetition", last_all_rules);
  std::cout << "\n";
  if (!keep) {
    fs::remove_all(trial);
    if (other_run) fs::remove_all(other_trial);
  }
}

// The rules, in every_rule()'s order, that end in Error on the long job: an MLP of two tiny
// layers saves no input images, labels and predictions, ReLU outputs, feature importances,
// embeddings, tanh or sigmoid inputs, or trees, and a rule with nothing to read must not say
// NoIssuesFound. Any other rule in Error, or one of these not, fails the scaling run.
constexpr const char* kRulesTheLongJobCannotFeed =
    "CheckInputImages,ClassImbalance,Confusion,DeadRelu,FeatureImportanceOverweight,"
    "NLPSequenceRatio,SaturatedActivation,TreeDepth";

// How a replay's cost grows with the job's length: all twenty rules over a job of tiny tensors,
// `steps` / 10 steps against `steps`. The cost per step stays flat when every stage and rule
// does a step's work in time independent of how many steps came before; something that looks
// through every earlier step at every step makes the long job's per-step cost up to ten times
// the short one's (the quadratic lookups fixed on 2026-11-25 did: 67 s against 1.2 s).
void bench_scaling(const fs::path& data, std::int64_t steps, int workers, int repetitions,
                   const std::string& threads, bool keep) {
  std::cout << "## scaling with steps: all rules over " << steps / 10 << " and " << steps
            << " steps of " << workers << " workers, 11 tiny tensors each\n";
  struct Length {
    std::int64_t steps = 0;
    fs::path trial;
    std::vector<double> seconds;
    double rss = 0.0;
  };
  std::vector<Length> lengths = {{steps / 10, data / "short-job", {}, 0.0},
                                 {steps, data / "long-job", {}, 0.0}};
  for (Length& length : lengths) {
    if (fs::exists(length.trial)) fs::remove_all(length.trial);
    run_phase({"--phase", "generate", "--kind", "long", "--out", length.trial.string(), "--steps",
               std::to_string(length.steps), "--workers", std::to_string(workers)});
  }
  ::sync();
  std::vector<double> per_step_ratios;
  for (int r = 0; r < repetitions; ++r) {
    for (Length& length : lengths) {
      const auto replay = run_phase({"--phase", "replay", "--trial", length.trial.string(),
                                     "--threads", threads, "--rules", "all"});
      if (num(replay, "steps") != static_cast<double>(length.steps) ||
          replay.values.at("problems") != "0" ||
          replay.values.at("error_rules") != kRulesTheLongJobCannotFeed) {
        throw std::runtime_error(
            "replay of " + length.trial.string() + " was not clean: steps " +
            replay.values.at("steps") + ", problems " + replay.values.at("problems") +
            ", rules in Error " + replay.values.at("error_rules") + " (expected " +
            kRulesTheLongJobCannotFeed + "); --phase replay --trial " + length.trial.string() +
            " --rules all --explain-errors says why each ended in Error");
      }
      length.seconds.push_back(num(replay, "seconds"));
      length.rss = std::max(length.rss, replay.max_rss_mib);
    }
    const double short_per_step = lengths[0].seconds.back() / static_cast<double>(lengths[0].steps);
    const double long_per_step = lengths[1].seconds.back() / static_cast<double>(lengths[1].steps);
    per_step_ratios.push_back(long_per_step / short_per_step);
    std::cout << "  run " << r + 1 << ": " << fixed(lengths[0].seconds.back(), 2) << " s and "
              << fixed(lengths[1].seconds.back(), 2) << " s, per-step cost "
              << fixed(per_step_ratios.back(), 2) << "x; load " << load_average() << "\n";
  }
  std::cout << "| steps | all rules (median) | per 1,000 steps | peak RSS |\n";
  for (const Length& length : lengths) {
    const double seconds = median(length.seconds);
    std::cout << "| " << length.steps << " | " << fixed(seconds, 2) << " s | "
              << fixed(seconds * 1000.0 / static_cast<double>(length.steps) * 1000.0, 1) << " ms | "
              << fixed(length.rss, 0) << " MiB |\n";
  }
  std::cout << "per-step cost, long / short: " << fixed(median(per_step_ratios), 2)
            << "x (1 is linear)\n\n";
  if (!keep) {
    for (const Length& length : lengths) fs::remove_all(length.trial);
  }
}

// "1.62x" for one figure, "1.62x (1.55-1.70x)" for the median of several and their range.
std::string ratio_with_range(const std::vector<double>& ratios) {
  if (ratios.empty()) return "-";
  const double low = *std::min_element(ratios.begin(), ratios.end());
  const double high = *std::max_element(ratios.begin(), ratios.end());
  std::string text = fixed(median(ratios), 2) + "x";
  if (ratios.size() > 1) text += " (" + fixed(low, 2) + "-" + fixed(high, 2) + "x)";
  return text;
}

// Issue 23's table: the replays of a job at each thread count of --threads-sweep (one to
// sixteen, say), with read() of its event files by as many threads beside them; each count's
// speedup over the first; and, from the first count's replays (one thread: their CPU time is the
// work itself), each serial node's share and the speedup it allows on 16 threads (each round's
// from its own runs; the median round's is printed, with every round's range). Every count
// must give the same events in the same order as the first (events_fingerprint), or the sweep
// fails. `pin`: each child is held to as many CPUs as its count (pin_to_cpus), so T threads are
// T cores' work.
//
// The runs go round by round: each repetition runs every count in turn, and a count's speedup
// is taken against the first count's run of the same round, a few seconds before it (the median
// over the rounds, with their range). A shared VM's speed moves between sittings and within
// one; a sweep that ran all of one count's repetitions before the next counted that drift as
// speedup. Three more columns tell the code's losses from the machine's:
// - the four rules' CPU time at T threads over one thread's (the work more threads add: cache
//   lines moving between cores, waits that spin), and below the table, for both sets of rules,
//   that and the share of the threads' time they were busy (the speedup is about threads x
//   busy / CPU);
// - T one-thread replays side by side, each on a CPU of its own (when the first count is 1):
//   T times the one-thread time over their mean time is the speedup the machine itself gives T
//   copies of the work that share nothing but the machine (memory bandwidth, caches, a host's
//   other guests). A replay's speedup can approach it, not pass it (beyond a round's noise).
//   Measured for both sets of rules: all twenty hold twice the four's memory and read more of
//   it, so on a VM the machine may give their copies less than the four's (on the 2-core VM,
//   1.6-2.0x against 1.8-2.0x);
// - the replay's speedup over the copies' of the same round: what the code itself leaves of
//   the machine's speedup (1 where it loses nothing to threads sharing one job).
void bench_sweep(const std::string& kind, const fs::path& data, std::int64_t steps, int workers,
                 int repetitions, const std::vector<int>& counts, bool pin, bool keep) {
  const fs::path trial = data / (kind + "-job");
  std::cout << "## " << kind << " job, threads sweep: " << workers << " workers x " << steps
            << " steps, "
            << (pin ? "each run held to as many CPUs as its threads"
                    : "each run free to use every CPU")
            << ", " << repetitions << " rounds of every count\n";
  std::cout << "fresh memory faults in at "
            << fixed(num(run_phase({"--phase", "fresh-memory", "--mib", "256"}), "gb_per_second"),
                     2)
            << " GB/s (phase_fresh_memory: 10-25 GB/s where the machine's memory is its own; "
               "0.4-0.7 GB/s on a VM whose host has taken freed memory back)\n";
  generate_job(kind, trial, steps, workers, 0, std::to_string(counts.back()));
  // One replay of all the rules, not counted, before the rounds: the first replay after the
  // generator's exit met memory the host had taken back (on the 2-core VM its one-thread run
  // took 1.5 s against 0.75-0.94 s in the rounds after it, a speedup of 3.55x that round).
  run_phase({"--phase", "replay", "--trial", trial.string(), "--threads",
             std::to_string(counts.back()), "--rules", "all"});
  const bool copies_measured = counts.front() == 1;
  // What every round measured at one count.
  struct Count {
    int threads = 0;
    std::vector<double> read, four, all;
    std::vector<double> four_speedup, all_speedup;  // over the first count, same round
    std::vector<double> four_cpu, all_cpu;          // CPU time over the first count's
    // The run's CPU time over its threads' time (threads x wall time): what is left is time its
    // threads spent waiting (for a lock, a load, a serial node) or the machine kept from them.
    std::vector<double> four_busy, all_busy;
    std::vector<double> machine, machine_all;  // T one-thread copies side by side
    // The replay's speedup over the copies' in the same round: 1 where the code loses nothing
    // beyond what the machine itself takes from T copies of the work.
    std::vector<double> over_machine, over_machine_all;
    // This count's serial nodes against the first count's CPU time, each round's.
    std::vector<SerialShares> bounds_four, bounds_all;
    double four_rss = 0, all_rss = 0;
  };
  std::vector<Count> table(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) table[i].threads = counts[i];
  std::string four_fingerprint;
  std::string all_fingerprint;
  // Every round's replays at the first count (one thread: the work itself) and at the last (its
  // serial nodes are what bound it), for the serial fraction of each round.
  struct RoundReplays {
    ChildResult first_four, first_all, last_four, last_all;
  };
  std::vector<RoundReplays> rounds(static_cast<std::size_t>(repetitions));
  auto check_same = [](std::string& expected, const ChildResult& replay, const std::string& what) {
    const std::string& got = replay.values.at("events_fingerprint");
    if (expected.empty()) expected = got;
    if (got != expected) {
      throw std::runtime_error(what + ": events differ from the first thread count's (" + got +
                               " against " + expected + ")");
    }
  };
  // Pinned, a phase also takes --cpus (and --first-cpu): the child holds itself to those CPUs.
  const auto held = [&](int cpus, int first = 0) {
    std::vector<std::string> extra;
    if (pin) extra = {"--cpus", std::to_string(cpus), "--first-cpu", std::to_string(first)};
    return extra;
  };
  const auto with = [](std::vector<std::string> phase_args, const std::vector<std::string>& more) {
    phase_args.insert(phase_args.end(), more.begin(), more.end());
    return phase_args;
  };
  for (int round = 0; round < repetitions; ++round) {
    double four_base = 0, all_base = 0, cpu_base = 0, all_cpu_base = 0;
    std::ostringstream line;
    line << "  round " << round + 1 << ":";
    for (std::size_t i = 0; i < counts.size(); ++i) {
      Count& count = table[i];
      const std::string t = std::to_string(count.threads);
      const auto ceiling = run_phase(with(
          {"--phase", "ceiling", "--method", "read", "--trial", trial.string(), "--threads", t},
          held(count.threads)));
      count.read.push_back(num(ceiling, "seconds"));
      const auto four = run_phase(with(
          {"--phase", "replay", "--trial", trial.string(), "--threads", t}, held(count.threads)));
      check_same(four_fingerprint, four, kind + " job, four rules, " + t + " threads");
      const auto all = run_phase(
          with({"--phase", "replay", "--trial", trial.string(), "--threads", t, "--rules", "all"},
               held(count.threads)));
      check_same(all_fingerprint, all, kind + " job, all rules, " + t + " threads");
      const double four_seconds = num(four, "seconds");
      const double all_seconds = num(all, "seconds");
      if (i == 0) {
        four_base = four_seconds;
        all_base = all_seconds;
        cpu_base = num(four, "cpu_seconds");
        all_cpu_base = num(all, "cpu_seconds");
      }
      count.four.push_back(four_seconds);
      count.all.push_back(all_seconds);
      count.four_speedup.push_back(four_base / four_seconds);
      count.all_speedup.push_back(all_base / all_seconds);
      count.four_cpu.push_back(num(four, "cpu_seconds") / cpu_base);
      count.all_cpu.push_back(num(all, "cpu_seconds") / all_cpu_base);
      count.four_busy.push_back(num(four, "cpu_seconds") / (count.threads * four_seconds));
      count.all_busy.push_back(num(all, "cpu_seconds") / (count.threads * all_seconds));
      count.four_rss = std::max(count.four_rss, four.max_rss_mib);
      count.all_rss = std::max(count.all_rss, all.max_rss_mib);
      RoundReplays& kept = rounds[static_cast<std::size_t>(round)];
      if (i == 0) {
        kept.first_four = four;
        kept.first_all = all;
      }
      if (i + 1 == counts.size()) {
        kept.last_four = four;
        kept.last_all = all;
      }
      count.bounds_four.push_back(serial_shares(four, &kept.first_four));
      count.bounds_all.push_back(serial_shares(all, &kept.first_all));
      line << " " << t << " threads " << fixed(four_seconds, 3) << " / " << fixed(all_seconds, 3)
           << " s,";
    }
    if (copies_measured) {
      // T copies of one rule set's one-thread replay side by side: T times the one-thread time
      // over their mean time.
      const auto copies_speedup = [&](int threads, const std::vector<std::string>& rules,
                                      double one_thread_seconds, const std::string& what) {
        std::vector<RunningPhase> copies;
        for (int copy = 0; copy < threads; ++copy) {
          copies.push_back(start_phase(
              with(with({"--phase", "replay", "--trial", trial.string(), "--threads", "1"}, rules),
                   held(1, copy))));
        }
        double total = 0;
        for (auto& copy : copies) total += num(finish_phase(copy), "seconds");
        const double mean = total / static_cast<double>(threads);
        line << " " << threads << " copies" << what << " " << fixed(mean, 3) << " s,";
        return threads * one_thread_seconds / mean;
      };
      for (std::size_t i = 1; i < counts.size(); ++i) {
        Count& count = table[i];
        count.machine.push_back(copies_speedup(count.threads, {}, four_base, ""));
        count.machine_all.push_back(
            copies_speedup(count.threads, {"--rules", "all"}, all_base, " (all rules)"));
        count.over_machine.push_back(count.four_speedup.back() / count.machine.back());
        count.over_machine_all.push_back(count.all_speedup.back() / count.machine_all.back());
      }
    }
    std::cout << line.str() << " load " << load_average() << "\n";
  }
  std::cout << "| threads | read() | replay, four rules | speedup | replay, all rules | speedup | "
               "all / four | read() / replay, four rules | CPU, four rules, over "
            << counts.front()
            << " thread's | the machine: T one-thread replays side by side, four rules | the "
               "same, all rules | replay's speedup over the machine's, four / all | peak RSS, "
               "four / all |\n"
            << "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
               "---: | ---: |\n";
  for (const Count& count : table) {
    const double four = median(count.four);
    const double all = median(count.all);
    const double read = median(count.read);
    std::cout << "| " << count.threads << " | " << fixed(read, 3) << " s | " << fixed(four, 3)
              << " s | " << ratio_with_range(count.four_speedup) << " | " << fixed(all, 3)
              << " s | " << ratio_with_range(count.all_speedup) << " | " << fixed(all / four, 2)
              << "x | " << fixed(read / four * 100, 0) << "% | " << ratio_with_range(count.four_cpu)
              << " | " << ratio_with_range(count.machine) << " | "
              << ratio_with_range(count.machine_all) << " | "
              << (count.over_machine.empty() ? std::string("-")
                                             : fixed(median(count.over_machine), 2) + "x / " +
                                                   fixed(median(count.over_machine_all), 2) + "x")
              << " | " << fixed(count.four_rss, 0) << " / " << fixed(count.all_rss, 0)
              << " MiB |\n";
  }
  std::cout << "speedups: the median over the rounds of each round's own ratio, with their range; "
               "every thread count gave the same events in the same order, rule by rule, in "
               "every round\n";
  // Where a serial node's share starts to grow with the threads: the bound each count's serial
  // nodes give, the median round's, with its largest node. Not at one thread, where a node's
  // parallel sections run inline on its own thread and so count as serial (the assembler's
  // whole ingestion, a step-parallel rule's every step).
  const auto print_bounds_by_count = [&](const std::string& rules,
                                         std::vector<SerialShares> Count::*bounds) {
    std::cout << "Amdahl bound at 16 threads from each count's serial nodes (median round; its "
                 "largest node), "
              << rules << ":";
    for (const Count& count : table) {
      if (count.threads == 1) continue;
      std::vector<SerialShares> sorted = count.*bounds;
      std::sort(sorted.begin(), sorted.end(), [](const SerialShares& a, const SerialShares& b) {
        return a.bound_at_16() < b.bound_at_16();
      });
      const SerialShares& middle = sorted[sorted.size() / 2];
      std::cout << " " << count.threads << " threads " << fixed(middle.bound_at_16(), 1) << "x ("
                << middle.nodes.front().second << " " << fixed(middle.nodes.front().first, 3)
                << ")";
    }
    std::cout << "\n";
  };
  print_bounds_by_count("four rules", &Count::bounds_four);
  print_bounds_by_count("all rules", &Count::bounds_all);
  // A speedup is about the threads, times the share of their time they were busy, over the CPU
  // time the work took against the first count's (exactly so when the first count, one thread,
  // was busy all its time): a count that falls short either waited (busy well under 100%: a serial
  // node, a lock, a load the bound above cannot see) or worked more (CPU over 1x: cache lines
  // moving between cores, spinning). Medians over the rounds.
  const auto print_busy_by_count = [&](const std::string& rules, std::vector<double> Count::*busy,
                                       std::vector<double> Count::*cpu) {
    std::cout << "threads busy and CPU over " << counts.front()
              << " thread's (the speedup is about threads x busy / CPU), " << rules << ":";
    for (const Count& count : table) {
      std::cout << " " << count.threads << " threads " << fixed(median(count.*busy) * 100, 0)
                << "% busy, CPU " << fixed(median(count.*cpu), 2) << "x;";
    }
    std::cout << "\n";
  };
  print_busy_by_count("four rules", &Count::four_busy, &Count::four_cpu);
  print_busy_by_count("all rules", &Count::all_busy, &Count::all_cpu);
  // The serial nodes' CPU time at the last count, over the first count's CPU time (with one
  // thread first, the run's work), each round's from its own runs. One round's can be far off
  // on a shared VM (a serial node whose thread the host held up counts the wait as busy), so
  // the round whose bound is the median is printed, with every round's range.
  const auto print_median_round = [&](const std::string& rules, ChildResult RoundReplays::*first,
                                      ChildResult RoundReplays::*last) {
    std::vector<double> bounds;
    for (const RoundReplays& kept : rounds) {
      bounds.push_back(serial_shares(kept.*last, &(kept.*first)).bound_at_16());
    }
    std::vector<std::size_t> order(rounds.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return bounds[a] < bounds[b]; });
    const std::size_t middle = order[order.size() / 2];
    print_serial_fraction(kind + " job, " + rules + " (serial nodes at " +
                              std::to_string(counts.back()) + " threads, CPU at " +
                              std::to_string(counts.front()) + "; round " +
                              std::to_string(middle + 1) + ", the median bound's)",
                          rounds[middle].*last, &(rounds[middle].*first), bounds);
  };
  print_median_round("four rules", &RoundReplays::first_four, &RoundReplays::last_four);
  print_median_round("all rules", &RoundReplays::first_all, &RoundReplays::last_all);
  print_rule_times(rounds.back().first_all.values["rule_seconds"]);
  if (!keep) fs::remove_all(trial);
}

int driver(const Args& args) {
  const fs::path data = arg(args, "data", "/work/bench-data");
  const int repetitions = static_cast<int>(int_arg(args, "repetitions", 5));
  const int workers = static_cast<int>(int_arg(args, "workers", 2));
  const std::string threads = std::to_string(thread_count(args));
  const bool keep = args.contains("keep");
  const bool other_run = args.contains("other-run");
  const std::string only = arg(args, "only", "large,small,scaling,latency");
  fs::create_directories(data);
  struct rusage self {};
  ::getrusage(RUSAGE_SELF, &self);
  std::cout << "threads " << threads << ", driver peak RSS " << self.ru_maxrss / 1024
            << " MiB (the floor of every child's figure), load " << load_average() << "\n\n";
  if (args.contains("threads-sweep")) {
    std::vector<int> counts;
    std::istringstream list(arg(args, "threads-sweep", ""));
    for (std::string count; std::getline(list, count, ',');) counts.push_back(std::stoi(count));
    if (counts.empty()) throw std::invalid_argument("--threads-sweep needs counts: 1,2,4,8,16");
    const std::string pin = arg(args, "pin", "yes");
    if (pin != "yes" && pin != "no") throw std::invalid_argument("--pin takes yes or no");
    for (const std::string kind : {"large", "small"}) {
      if (only.find(kind) == std::string::npos) continue;
      bench_sweep(kind, data, int_arg(args, kind + "-steps", kind == "large" ? 500 : 300), workers,
                  repetitions, counts, pin == "yes", keep);
    }
    return 0;
  }
  if (only.find("large") != std::string::npos) {
    bench_job("large", data, int_arg(args, "large-steps", 500), workers, repetitions, threads, keep,
              other_run);
  }
  if (only.find("small") != std::string::npos) {
    bench_job("small", data, int_arg(args, "small-steps", 300), workers, repetitions, threads, keep,
              other_run);
  }
  if (only.find("scaling") != std::string::npos) {
    bench_scaling(data, int_arg(args, "scaling-steps", 20000), workers, repetitions, threads, keep);
  }
  if (only.find("latency") != std::string::npos) {
    const fs::path out = data / "latency-job";
    if (fs::exists(out)) fs::remove_all(out);
    const std::string steps = std::to_string(int_arg(args, "latency-steps", 200));
    const std::string delay = std::to_string(int_arg(args, "delay-ms", 20));
    std::cout << "## live latency: " << workers << " workers x " << steps << " steps, " << delay
              << " ms apart\n";
    const auto latency =
        run_phase({"--phase", "latency", "--out", out.string(), "--steps", steps, "--delay-ms",
                   delay, "--workers", std::to_string(workers), "--threads", threads});
    std::cout << "| measured from | steps | missing | p50 | p90 | p99 | max | min |\n";
    for (const std::string prefix : {"", "mtime_"}) {
      std::cout << "| " << (prefix.empty() ? "on_step_written" : "index file mtime") << " | "
                << latency.values.at("steps") << " | " << latency.values.at("missing") << " | "
                << fixed(num(latency, prefix + "p50_ms"), 1) << " ms | "
                << fixed(num(latency, prefix + "p90_ms"), 1) << " ms | "
                << fixed(num(latency, prefix + "p99_ms"), 1) << " ms | "
                << fixed(num(latency, prefix + "max_ms"), 1) << " ms | "
                << fixed(num(latency, prefix + "min_ms"), 1) << " ms |\n";
    }
    std::cout << "(peak RSS " << fixed(latency.max_rss_mib, 0) << " MiB, problems "
              << latency.values.at("problems") << ", load " << load_average() << ")\n";
    if (!keep) fs::remove_all(out);
  }
  return 0;
}

constexpr const char* kUsage =
    R"(usage: pipeline_e2e [options]   (see RESULTS.md for the commands behind each table)
  --data DIR              where the generated jobs go (default /work/bench-data)
  --only LIST             large,small,scaling,latency (default: all four)
  --threads N             threads of every phase (default 2)
  --repetitions N         runs of each measure (default 5)
  --workers N             workers of each generated job (default 2)
  --large-steps N, --small-steps N, --scaling-steps N, --latency-steps N, --delay-ms N
  --keep                  keep the generated jobs
  --other-run             SimilarAcrossRuns also against a run from another seed (diagnosis)
  --threads-sweep 1,2,... issue 23's table: replays at each thread count, with the serial
                          fractions and the speedup they bound at 16 threads
  --pin yes|no            hold each sweep run to as many CPUs as its threads (default yes)
A phase runs alone with --phase generate|ceiling|replay|latency|fresh-memory (what the driver runs in a child;
replay takes --trial DIR --rules four|all|all-but-similar --explain-errors --cpus N).
)";

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse_args(argc, argv);
    if (args.contains("help")) {
      std::cout << kUsage;
      return 0;
    }
    const std::string phase = arg(args, "phase", "");
    if (phase.empty()) return driver(args);
    if (args.contains("cpus")) {
      pin_to_cpus(static_cast<int>(int_arg(args, "first-cpu", 0)),
                  static_cast<int>(int_arg(args, "cpus", 0)));
    } else if (args.contains("first-cpu")) {
      throw std::invalid_argument("--first-cpu needs --cpus");
    }
    if (phase == "generate") return phase_generate(args);
    if (phase == "ceiling") return phase_ceiling(args);
    if (phase == "replay") return phase_replay(args);
    if (phase == "latency") return phase_latency(args);
    if (phase == "fresh-memory") return phase_fresh_memory(args);
    throw std::invalid_argument("unknown phase: " + phase);
  } catch (const std::exception& error) {
    std::cerr << "pipeline_e2e: " << error.what() << "\n";
    return 2;
  }
}
