// `rulestream report` on 100,000-step jobs (issue 26): how long the page takes to make, how
// large it is, and how long headless Chromium takes to open it (navigation start to the last
// chart drawn, as the page's script records it in <body data-ready-ms>), beside Chromium
// opening an empty page (its own start-up, which a person's already-open browser does not pay).
//
//   report_e2e [--steps 100000] [--workdir /tmp/report_e2e] [--chromium /usr/bin/chromium]
//              [--repeat 5]
//
// The jobs are simulated once into the workdir and kept (an smdebug job of 100,000 steps is
// 200,000 files and takes minutes to write here): VanishingGradients from the middle (so
// VanishingGradient fires at 50,000 steps, each kept on the loss), 16-element tensors; and a
// TensorBoard logdir exploding from 60% (NaN from there on).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "apps/report/report_page.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "apps/simulator/tensorboard_simulator.hpp"
#include "benchmarks/child_phase.hpp"

namespace fs = std::filesystem;
using namespace rulestream;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void ensure_jobs(const fs::path& workdir, std::int64_t steps) {
  const fs::path smdebug = workdir / "smdebug";
  if (!fs::exists(smdebug / "training_job_end.ts")) {
    fs::remove_all(smdebug);
    JobSimulatorOptions options;
    options.output = smdebug;
    options.scenario = JobScenario::VanishingGradients;
    options.steps = steps;
    options.tensor_size = 16;
    const auto start = Clock::now();
    JobSimulator(options).run();
    std::cout << "simulated " << smdebug << " in " << seconds_since(start) << " s\n";
  }
  const fs::path logdir = workdir / "tensorboard";
  if (!fs::exists(logdir / "done")) {
    fs::remove_all(logdir);
    TensorBoardSimulatorOptions options;
    options.output = logdir;
    options.scenario = TensorBoardScenario::Exploding;
    options.steps = steps;
    simulate_tensorboard(options);
    std::ofstream(logdir / "done") << "simulated\n";
  }
}

struct Opened {
  double wall_s = 0;    // the chromium process, start to exit
  double ready_ms = 0;  // the page's own figure; 0 for the empty page
};

Opened open_in_chromium(const std::string& chromium, const fs::path& page,
                        const fs::path& profile) {
  const std::string command =
      "'" + chromium + "' --headless --no-sandbox --disable-gpu --user-data-dir='" +
      profile.string() + "' --dump-dom 'file://" + page.string() + "' 2>/dev/null";
  const auto start = Clock::now();
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + chromium);
  std::string dom;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) dom.append(buffer, n);
  const int status = ::pclose(pipe);
  Opened opened{.wall_s = seconds_since(start)};
  if (status != 0) throw std::runtime_error(command + " failed");
  std::smatch match;
  const std::string head = dom.substr(0, dom.find('>', dom.find("<body")) + 1);
  if (std::regex_search(head, match, std::regex("data-ready-ms=\"([0-9.]+)\""))) {
    opened.ready_ms = std::stod(match[1]);
  }
  return opened;
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = bench::parse_args(argc, argv);
  const std::int64_t steps = bench::int_arg(args, "steps", 100'000);
  const fs::path workdir = bench::arg(args, "workdir", "/tmp/report_e2e");
  const std::string chromium = bench::arg(args, "chromium", "/usr/bin/chromium");
  const int repeat = static_cast<int>(bench::int_arg(args, "repeat", 5));
  fs::create_directories(workdir);
  ensure_jobs(workdir, steps);

  const fs::path empty = workdir / "empty.html";
  std::ofstream(empty) << "<!DOCTYPE html><html><body>empty</body></html>\n";
  std::vector<double> empty_wall;
  for (int i = 0; i < repeat; ++i) {
    empty_wall.push_back(open_in_chromium(chromium, empty, workdir / "profile").wall_s);
  }
  std::cout << "chromium, empty page: wall " << median(empty_wall) << " s (median of " << repeat
            << ")\n";

  for (const std::string job : {"smdebug", "tensorboard"}) {
    const fs::path page = workdir / (job + ".html");
    std::vector<double> make_s;
    for (int i = 0; i < repeat; ++i) {
      PipelineConfig config;
      config.paths = {(workdir / job).string()};
      std::ofstream out(page, std::ios::binary | std::ios::trunc);
      const auto start = Clock::now();
      write_report_page(config, out);
      out.close();
      make_s.push_back(seconds_since(start));
    }
    std::vector<double> wall, ready;
    for (int i = 0; i < repeat; ++i) {
      const Opened opened = open_in_chromium(chromium, page, workdir / "profile");
      wall.push_back(opened.wall_s);
      ready.push_back(opened.ready_ms);
    }
    std::cout << job << " (" << steps << " steps): page " << fs::file_size(page)
              << " bytes, made in " << median(make_s) << " s; chromium: ready after "
              << median(ready) << " ms, wall " << median(wall) << " s (medians of " << repeat
              << ")\n";
  }
  return 0;
}
