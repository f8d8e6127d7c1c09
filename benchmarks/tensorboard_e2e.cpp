// tensorboard_e2e: rules over a scalar-heavy TensorBoard logdir shaped like TensorBoard's public
// edge_cgan benchmark (8 runs, 5 tags each, 600,000 steps: 24 M simple_value points), replayed
// with NonFinite, LossNotDecreasing and LossSpike on every tag, beside what reading the same
// files costs (read() into a buffer; decoding every record with no rule), on 1 and 2 threads;
// and a watch's latency from a record landing to its rule event. Every phase runs as a child
// (benchmarks/child_phase.hpp) whose peak RSS is its own.
//
//   tensorboard_e2e --data DIR [--runs 8] [--steps 600000] [--repetitions 3]
//                   [--latency-points 200] [--poll-ms 50]
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/simulator/tensorboard_simulator.hpp"
#include "benchmarks/child_phase.hpp"
#include "engine/graph/series_pipeline.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "stages/tensorboard/logdir_runs.hpp"

namespace {

namespace fs = std::filesystem;
using namespace rulestream;
using bench::arg;
using bench::Args;
using bench::int_arg;
using bench::median;
using bench::num;
using bench::run_phase;
using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Counts events and, for the latency phase, when each arrived.
class CountingSink final : public Sink {
 public:
  std::string describe() const override { return "counting"; }
  void write(const RuleEvent& event) override {
    const std::lock_guard lock(mutex_);
    if (event.kind == RuleEvent::Kind::ConditionMet) {
      ++fired_;
      arrivals_.emplace_back(event.tensors.empty() ? std::string() : event.tensors.front(),
                             SteadyClock::now());
    }
  }
  void flush() override {}
  std::int64_t fired() const {
    const std::lock_guard lock(mutex_);
    return fired_;
  }
  std::vector<std::pair<std::string, SteadyClock::time_point>> arrivals() const {
    const std::lock_guard lock(mutex_);
    return arrivals_;
  }

 private:
  mutable std::mutex mutex_;
  std::int64_t fired_ = 0;
  std::vector<std::pair<std::string, SteadyClock::time_point>> arrivals_;
};

RuleConfig rule(const std::string& name, std::map<std::string, std::string> parameters) {
  RuleConfig config;
  config.rule = name;
  config.parameters = std::move(parameters);
  return config;
}

// The three rules, each on every tag.
std::vector<RuleConfig> three_rules() {
  return {rule("NonFinite", {}),
          rule("LossNotDecreasing", {{"use_losses_collection", "False"}, {"tensor_regex", ".*"}}),
          rule("LossSpike", {{"tag_regex", ".*"}})};
}

int phase_generate(const Args& args) {
  TensorBoardSimulatorOptions options;
  options.output = arg(args, "out", "");
  options.runs = static_cast<int>(int_arg(args, "runs", 8));
  options.steps = int_arg(args, "steps", 600000);
  options.extra_tags = 1;  // train/loss, eval/loss, train/grad_norm, train/learning_rate, +1
  options.eval_every = 1;
  const auto started = SteadyClock::now();
  const TensorBoardSimulation simulation = simulate_tensorboard(options);
  std::cout << "values=" << simulation.values << " bytes=" << simulation.bytes
            << " seconds=" << seconds_since(started) << "\n";
  return 0;
}

// read() of every event file into a 1 MiB buffer, files split across `threads`.
int phase_ceiling(const Args& args) {
  const fs::path logdir = arg(args, "logdir", "");
  const int threads = static_cast<int>(int_arg(args, "threads", 2));
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(logdir)) {
    if (entry.is_regular_file() && is_event_file(entry.path().string())) {
      files.push_back(entry.path());
    }
  }
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> bytes{0};
  const auto started = SteadyClock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::vector<char> buffer(std::size_t{1} << 20);
      for (std::size_t i = next++; i < files.size(); i = next++) {
        const int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        for (ssize_t got; (got = ::read(fd, buffer.data(), buffer.size())) > 0;) {
          bytes += static_cast<std::uint64_t>(got);
        }
        ::close(fd);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::cout << "seconds=" << seconds_since(started) << " bytes=" << bytes.load() << "\n";
  return 0;
}

// The pipeline over the logdir: with no rule (every record framed, CRC-checked and decoded) or
// with the three rules.
int phase_replay(const Args& args) {
  PipelineConfig config;
  config.paths = {arg(args, "logdir", "")};
  config.threads = static_cast<int>(int_arg(args, "threads", 2));
  if (arg(args, "rules", "three") == "three") config.rules = three_rules();
  auto sink = std::make_unique<CountingSink>();
  auto* counting = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  SeriesPipeline pipeline(std::move(config), std::move(sinks));
  const auto started = SteadyClock::now();
  const SeriesReport report = pipeline.run();
  const double seconds = seconds_since(started);
  if (!report.source_failure.empty()) throw std::runtime_error(report.source_failure);
  std::cout << "seconds=" << seconds << " values=" << report.values
            << " events=" << counting->fired() << " problems=" << report.problems.size() << "\n";
  return 0;
}

// A writer appends one NaN to a new tag every 20 ms while a watch polls the logdir every
// poll-ms; NonFinite fires once per tag. Latency: from the write() of a record to its event
// reaching the sink.
int phase_latency(const Args& args) {
  const fs::path logdir = arg(args, "out", "");
  const auto points = int_arg(args, "points", 200);
  fs::remove_all(logdir);
  fs::create_directories(logdir);
  PipelineConfig config;
  config.paths = {logdir.string()};
  config.follow = true;
  config.poll_interval = std::chrono::milliseconds(int_arg(args, "poll-ms", 50));
  config.rules = {rule("NonFinite", {})};
  auto sink = std::make_unique<CountingSink>();
  auto* counting = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  SeriesPipeline pipeline(std::move(config), std::move(sinks));
  std::thread runner([&] { pipeline.run(); });
  std::vector<SteadyClock::time_point> written(static_cast<std::size_t>(points));
  {
    TensorBoardWriter writer(logdir / "events.out.tfevents.1.latency");
    for (std::int64_t i = 0; i < points; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      written[static_cast<std::size_t>(i)] = SteadyClock::now();
      writer.add_scalar("lat/" + std::to_string(i), i, std::nanf(""), static_cast<double>(i));
    }
  }
  const auto deadline = SteadyClock::now() + std::chrono::seconds(10);
  while (counting->fired() < points && SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pipeline.request_stop();
  runner.join();
  std::vector<double> latencies;
  for (const auto& [tag, at] : counting->arrivals()) {
    const auto index = static_cast<std::size_t>(std::stoll(tag.substr(tag.find('/') + 1)));
    latencies.push_back(std::chrono::duration<double, std::milli>(at - written[index]).count());
  }
  std::sort(latencies.begin(), latencies.end());
  const auto at = [&](double q) {
    return latencies.empty()
               ? -1.0
               : latencies[std::min(
                     latencies.size() - 1,
                     static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
  };
  std::cout << "events=" << latencies.size() << " p50_ms=" << at(0.5) << " p99_ms=" << at(0.99)
            << " max_ms=" << (latencies.empty() ? -1.0 : latencies.back()) << "\n";
  fs::remove_all(logdir);
  return 0;
}

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

int driver(const Args& args) {
  const fs::path data = arg(args, "data", "");
  if (data.empty()) throw std::invalid_argument("--data DIR is required");
  const std::string runs = arg(args, "runs", "8");
  const std::string steps = arg(args, "steps", "600000");
  const int repetitions = static_cast<int>(int_arg(args, "repetitions", 3));
  const fs::path logdir = data / ("tb-" + runs + "x" + steps);
  if (!fs::exists(logdir / "run_0")) {
    const auto generated = run_phase(
        {"--phase", "generate", "--out", logdir.string(), "--runs", runs, "--steps", steps});
    std::cout << "generated " << logdir.string() << ": " << generated.values.at("values")
              << " values, " << generated.values.at("bytes") << " bytes in "
              << fixed(num(generated, "seconds"), 1) << " s\n";
  }
  std::map<std::string, std::vector<double>> rates;  // name -> values/s or bytes/s
  std::map<std::string, double> rss;
  double values = 0.0;
  double bytes = 0.0;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    for (const std::string threads : {"1", "2"}) {
      const auto ceiling =
          run_phase({"--phase", "ceiling", "--logdir", logdir.string(), "--threads", threads});
      bytes = num(ceiling, "bytes");
      rates["read() " + threads].push_back(bytes / num(ceiling, "seconds"));
      for (const std::string rules : {"none", "three"}) {
        const auto replay = run_phase({"--phase", "replay", "--logdir", logdir.string(),
                                       "--threads", threads, "--rules", rules});
        values = num(replay, "values");
        const std::string name = (rules == "none" ? "decode " : "replay ") + threads;
        rates[name].push_back(values / num(replay, "seconds"));
        rss[name] = std::max(rss[name], replay.max_rss_mib);
        if (rules == "three" && repetition == 0) {
          std::cout << "replay on " << threads << " threads: " << replay.values.at("events")
                    << " events, " << replay.values.at("problems") << " problems\n";
        }
      }
    }
  }
  std::cout << "\n"
            << fixed(values / 1e6, 2) << " M values, " << fixed(bytes / 1e9, 3)
            << " GB; medians of " << repetitions << " repetitions\n\n"
            << "| threads | read() | decode, no rule | replay, 3 rules | replay peak RSS |\n"
            << "| ---: | ---: | ---: | ---: | ---: |\n";
  for (const std::string threads : {"1", "2"}) {
    std::cout << "| " << threads << " | " << fixed(median(rates["read() " + threads]) / 1e9, 2)
              << " GB/s | " << fixed(median(rates["decode " + threads]) / 1e6, 2) << " M/s | "
              << fixed(median(rates["replay " + threads]) / 1e6, 2) << " M/s | "
              << fixed(rss["replay " + threads], 0) << " MiB |\n";
  }
  const auto latency =
      run_phase({"--phase", "latency", "--out", (data / "tb-latency").string(), "--points",
                 arg(args, "latency-points", "200"), "--poll-ms", arg(args, "poll-ms", "50")});
  std::cout << "\nwatch latency (poll " << arg(args, "poll-ms", "50")
            << " ms): " << latency.values.at("events") << " events, p50 "
            << fixed(num(latency, "p50_ms"), 1) << " ms, p99 " << fixed(num(latency, "p99_ms"), 1)
            << " ms, max " << fixed(num(latency, "max_ms"), 1) << " ms\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = bench::parse_args(argc, argv);
    const std::string phase = arg(args, "phase", "");
    if (phase.empty()) return driver(args);
    if (phase == "generate") return phase_generate(args);
    if (phase == "ceiling") return phase_ceiling(args);
    if (phase == "replay") return phase_replay(args);
    if (phase == "latency") return phase_latency(args);
    throw std::invalid_argument("unknown phase: " + phase);
  } catch (const std::exception& error) {
    std::cerr << "tensorboard_e2e: " << error.what() << "\n";
    return 2;
  }
}
