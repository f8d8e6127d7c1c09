#include "tests/support/serve_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <csignal>
#include <regex>
#include <stdexcept>

#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

std::vector<std::string> command_line(std::vector<std::string> args,
                                      const std::filesystem::path& state_dir) {
  std::vector<std::string> full{rulestream_binary().string(), "serve"};
  // The service's state in a folder of the test's, not in HOME, unless the test gives one.
  if (std::find(args.begin(), args.end(), "--state-dir") == args.end()) {
    full.push_back("--state-dir");
    full.push_back(state_dir.string());
  }
  full.insert(full.end(), args.begin(), args.end());
  full.push_back("--listen");
  full.push_back("127.0.0.1:0");  // nothing binds beyond the loopback in tests
  return full;
}

}  // namespace

ServeProcess::ServeProcess(std::vector<std::string> args)
    : state_dir_(std::make_unique<TempDir>()),
      child_(command_line(std::move(args), state_dir_->path())) {
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)\n");
  std::smatch match;
  const auto deadline = ChildProcess::Clock::now() + std::chrono::seconds(30);
  const bool listens = child_.read_until(
      [&] { return std::regex_search(child_.err(), match, listening); }, deadline);
  if (!listens) {
    ADD_FAILURE() << "rulestream serve did not listen; it said:\n" << child_.err();
    return;
  }
  port_ = static_cast<std::uint16_t>(std::stoi(match[1].str()));
  while (ChildProcess::Clock::now() < deadline) {
    if (http_get(port_, "/readyz").status == 200) return;
    child_.read_until([] { return false; },
                      ChildProcess::Clock::now() + std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "rulestream serve never got ready; it said:\n" << child_.err();
}

HttpReply ServeProcess::get(const std::string& target, const std::string& token) const {
  return http_get(port_, target, token.empty() ? "" : "Bearer " + token);
}

boost::json::value ServeProcess::get_json(const std::string& target,
                                          const std::string& token) const {
  const HttpReply reply = get(target, token);
  EXPECT_EQ(reply.status, 200u) << target << ": " << reply.body;
  EXPECT_EQ(reply.content_type, "application/json") << target;
  return boost::json::parse(reply.body);
}

bool ServeProcess::wait_for_jobs(const std::function<bool(const boost::json::value&)>& done,
                                 std::chrono::seconds timeout, const std::string& token) {
  const auto deadline = ChildProcess::Clock::now() + timeout;
  while (ChildProcess::Clock::now() < deadline) {
    if (done(get_json("/api/jobs", token))) return true;
    // Drains what serve prints meanwhile, so that its stderr never fills the pipe.
    child_.read_until([] { return false; },
                      ChildProcess::Clock::now() + std::chrono::milliseconds(100));
  }
  return false;
}

std::optional<int> ServeProcess::stop() {
  child_.signal(SIGTERM);
  return child_.wait_for_exit(ChildProcess::Clock::now() + std::chrono::seconds(30));
}

std::optional<int> ServeProcess::stop_twice(std::chrono::milliseconds between) {
  const auto deadline = ChildProcess::Clock::now() + std::chrono::seconds(30);
  child_.signal(SIGTERM);
  if (const auto exited = child_.wait_for_exit(ChildProcess::Clock::now() + between)) {
    return exited;
  }
  child_.signal(SIGTERM);
  return child_.wait_for_exit(deadline);
}

void ServeProcess::kill() {
  child_.signal(SIGKILL);
  child_.wait_for_exit(ChildProcess::Clock::now() + std::chrono::seconds(30));
}

const boost::json::object* find_job(const boost::json::value& jobs, const std::string& id) {
  for (const auto& job : jobs.at("jobs").as_array()) {
    if (job.at("id").as_string() == id) return &job.as_object();
  }
  return nullptr;
}

std::string state_of(const boost::json::value& jobs, const std::string& id) {
  const boost::json::object* job = find_job(jobs, id);
  return job ? std::string(job->at("state").as_string()) : "";
}

const boost::json::object& rule_of(const boost::json::object& job,
                                   const std::string& configuration) {
  for (const auto& rule : job.at("rules").as_array()) {
    if (rule.at("rule_configuration").as_string() == configuration) return rule.as_object();
  }
  throw std::out_of_range("job " + std::string(job.at("id").as_string()) + " has no rule " +
                          configuration);
}

}  // namespace rulestream::testing
