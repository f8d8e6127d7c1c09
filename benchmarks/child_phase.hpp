#pragma once

// What the end-to-end benchmarks share: "--key value" arguments, and phases run as children of
// the driver (this program exec'd again with --phase) so that each phase's peak RSS is its own
// (wait4) and the driver never holds data itself.

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream::bench {

// --- command line -------------------------------------------------------------------------

using Args = std::map<std::string, std::string>;

// "--key value" pairs; a trailing "--key" without a value is "1" (a flag).
inline Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (!key.starts_with("--")) throw std::invalid_argument("unexpected argument: " + key);
    key = key.substr(2);
    if (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--") {
      args[key] = argv[++i];
    } else {
      args[key] = "1";
    }
  }
  return args;
}

inline std::string arg(const Args& args, const std::string& key, const std::string& fallback) {
  const auto it = args.find(key);
  return it == args.end() ? fallback : it->second;
}

inline std::int64_t int_arg(const Args& args, const std::string& key, std::int64_t fallback) {
  const auto it = args.find(key);
  return it == args.end() ? fallback : std::stoll(it->second);
}

struct ChildResult {
  std::map<std::string, std::string> values;
  double max_rss_mib = 0.0;
};

// A phase started and not yet waited for (start_phase), so that several can run at once.
struct RunningPhase {
  pid_t pid = -1;
  int stdout_fd = -1;  // the read end of the child's stdout
  std::vector<std::string> args;
};

// Runs this program again with `phase_args`, its stdout into a pipe the caller reads in
// finish_phase. A phase prints one line, far less than a pipe holds, so phases started together
// never block on a reader that is waiting for another one.
inline RunningPhase start_phase(const std::vector<std::string>& phase_args) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::vector<std::string> argv_strings{"/proc/self/exe"};
  argv_strings.insert(argv_strings.end(), phase_args.begin(), phase_args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  return RunningPhase{pid, pipe_fds[0], phase_args};
}

// Collects a started phase's "key=value" stdout line and its peak RSS (wait4). A child that
// fails is fatal: its stderr has already gone to ours.
inline ChildResult finish_phase(RunningPhase& phase) {
  std::string output;
  char chunk[4096];
  for (;;) {
    const ssize_t got = ::read(phase.stdout_fd, chunk, sizeof chunk);
    if (got <= 0) break;
    output.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(phase.stdout_fd);
  phase.stdout_fd = -1;
  int status = 0;
  struct rusage usage {};
  if (::wait4(phase.pid, &status, 0, &usage) != phase.pid) {
    throw std::runtime_error("wait4 failed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ostringstream command;
    for (const auto& a : phase.args) command << a << " ";
    throw std::runtime_error("phase failed (status " + std::to_string(status) +
                             "): " + command.str());
  }
  ChildResult result;
  std::istringstream words(output);
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) result.values[word.substr(0, eq)] = word.substr(eq + 1);
  }
  result.max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  return result;
}

// Runs a phase and waits for it.
inline ChildResult run_phase(const std::vector<std::string>& phase_args) {
  RunningPhase phase = start_phase(phase_args);
  return finish_phase(phase);
}

inline double num(const ChildResult& result, const std::string& key) {
  const auto it = result.values.find(key);
  if (it == result.values.end()) throw std::runtime_error("phase output lacks " + key);
  return std::stod(it->second);
}

// Holds this process, and the threads it starts after, to `cpus` of the CPUs it may run on,
// from the `first`-th of them (0: the first): a phase asked for T threads then has T cores, and
// no more, and phases run side by side each have their own. Without it a one-thread run is not
// one core's work: threads outside its arena (the record arena's idle-priority prefaulter, the
// kernel's work on its behalf) take a second core where one is idle, and the speedup over it
// reads low. Throws when fewer CPUs are allowed than asked for.
inline void pin_to_cpus(int first, int cpus) {
  if (cpus < 1) {
    throw std::invalid_argument("--cpus " + std::to_string(cpus) + ": at least 1 CPU is needed");
  }
  if (first < 0) {
    throw std::invalid_argument("--first-cpu " + std::to_string(first) + ": 0 is the first");
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    throw std::runtime_error("sched_getaffinity failed");
  }
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  int seen = 0;
  int taken = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && taken < cpus; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ < first) continue;
    CPU_SET(cpu, &chosen);
    ++taken;
  }
  if (taken < cpus) {
    throw std::invalid_argument("--first-cpu " + std::to_string(first) + " --cpus " +
                                std::to_string(cpus) + ": this process may run on " +
                                std::to_string(seen) + " CPUs only");
  }
  if (::sched_setaffinity(0, sizeof(chosen), &chosen) != 0) {
    throw std::runtime_error("sched_setaffinity failed");
  }
}

// The machine's load averages ("1.72 1.45 1.84"), printed beside every figure: these
// benchmarks run on shared machines.
inline std::string load_average() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

}  // namespace rulestream::bench
