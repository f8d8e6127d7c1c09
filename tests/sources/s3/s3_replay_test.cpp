// `rulestream replay|watch|inspect s3://...` through the CLI (in process) against a real
// S3-compatible server: the same events as from a folder, a live watch while a writer uploads
// steps, the server going away mid-replay, and the errors a user meets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <csignal>
#include <cstdlib>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "apps/cli/cli.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/index_file.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/tcp_proxy.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using testing::run_cli;
using testing::TempDir;

// The job every test here replays: two workers whose gradients vanish from step 12.
JobSimulatorOptions job_options(const std::filesystem::path& output) {
  JobSimulatorOptions options;
  options.output = output;
  options.scenario = JobScenario::VanishingGradients;
  options.workers = 2;
  options.steps = 24;
  options.fault_step = 12;
  options.tensor_size = 64;
  return options;
}

// Rule events as JSON lines without their wall-clock time: what must match between sources.
std::vector<std::string> events_without_time(const std::string& out) {
  std::vector<std::string> events;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    boost::json::object event = boost::json::parse(line).as_object();
    event.erase("time");
    events.push_back(boost::json::serialize(event));
  }
  return events;
}

// Fired events per global step (status events have none).
std::map<std::int64_t, int> fired_steps(const std::string& out) {
  std::map<std::int64_t, int> steps;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const auto event = boost::json::parse(line).as_object();
    if (event.contains("global_step") && !event.at("global_step").is_null()) {
      ++steps[event.at("global_step").to_number<std::int64_t>()];
    }
  }
  return steps;
}

// For each event file of a local trial, the Range header that fetches exactly the records of
// `tensor` in it, as the index files place them ("bytes=FIRST-LAST").
std::map<std::string, std::string> ranges_of(const std::filesystem::path& trial,
                                             const std::string& tensor) {
  std::map<std::string, std::string> ranges;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(trial / kIndexDir)) {
    if (!entry.is_regular_file()) continue;
    const IndexFile index =
        parse_index_file(testing::read_text_file(entry.path()), entry.path().string());
    for (const auto& location : index.tensors) {
      if (location.tensor_name != tensor || !index.event_file_name) continue;
      EXPECT_FALSE(ranges.contains(*index.event_file_name)) << "two records in one event file";
      ranges[*index.event_file_name] = "bytes=" + std::to_string(location.start) + "-" +
                                       std::to_string(location.start + location.length - 1);
    }
  }
  return ranges;
}

class S3ReplayTest : public testing::S3ServerTest {
 protected:
  S3ReplayTest() : S3ServerTest("replay") {}

  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    server_->export_environment();
  }

  // The job written locally as "<tmp>/job" and uploaded to s3://bucket/<prefix>/job: the same
  // last path component, so that both runs name the trial "job".
  std::string upload_job(const std::string& prefix) {
    local_ = (scratch_.path() / "job").string();
    JobSimulator(job_options(local_)).run();
    testing::upload_folder(*client_, local_, bucket_, prefix + "/job");
    return "s3://" + bucket_ + "/" + prefix + "/job";
  }

  std::vector<std::string> rule_args(std::vector<std::string> args) const {
    for (const std::string extra : {"--rule", "VanishingGradient", "--format", "json"}) {
      args.push_back(extra);
    }
    return args;
  }

  TempDir scratch_;
  std::string local_;
};

TEST_F(S3ReplayTest, ReplayFromS3GivesTheSameEventsAsFromAFolder) {
  const std::string uri = upload_job("odd +=\xC3\xA9 prefix");
  const auto local = run_cli("replay", rule_args({local_}));
  const auto s3 = run_cli("replay", rule_args({uri, "--s3-endpoint", server_->endpoint()}));
  EXPECT_EQ(local.exit_code, 1) << local.err;  // the rule fired
  EXPECT_EQ(s3.exit_code, local.exit_code) << s3.err;
  EXPECT_FALSE(events_without_time(local.out).empty());
  EXPECT_EQ(events_without_time(s3.out), events_without_time(local.out));
  EXPECT_EQ(s3.err, local.err);  // the same summary: steps, files, tensors, bytes

  const auto inspect = run_cli("inspect", {uri, "--s3-endpoint", server_->endpoint()});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("workers    2 of 2"));
  EXPECT_THAT(inspect.out, HasSubstr(uri));
}

// Virtual-hosted addressing, as AWS is addressed, against the server: BUCKET.localhost (curl
// resolves every *.localhost name to the loopback) through a proxy that records the requests,
// none of which names the bucket in its path.
TEST_F(S3ReplayTest, VirtualHostedAddressingGivesTheSameEvents) {
  const std::string uri = upload_job("virtual");
  testing::TcpProxy proxy(server_->port());
  const auto local = run_cli("replay", rule_args({local_}));
  const auto s3 = run_cli(
      "replay", rule_args({uri, "--s3-endpoint", "http://localhost:" + std::to_string(proxy.port()),
                           "--s3-addressing", "virtual"}));
  EXPECT_EQ(s3.exit_code, local.exit_code) << s3.err;
  EXPECT_EQ(events_without_time(s3.out), events_without_time(local.out));
  const auto requests = proxy.requests();
  ASSERT_FALSE(requests.empty());
  for (const auto& request : requests) {
    EXPECT_FALSE(request.target.starts_with("/" + bucket_)) << request.target;
  }
  const auto bad = run_cli("replay", rule_args({uri, "--s3-addressing", "sideways"}));
  testing::expect_one_line_error(
      bad, "replay", {"--s3-addressing must be auto, path or virtual, not \"sideways\""});
}

TEST_F(S3ReplayTest, InspectOfAPrefixPrintsWhatInspectOfTheSameFolderPrints) {
  const std::string uri = upload_job("inspected");
  // A trial whose end marker is younger than its end_of_job_grace (1 s) may still expect late
  // files and says so (loaded_all_steps false): let both markers, the file's and the object's,
  // age past it, or the outputs would differ by when each inspect ran.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"--json"},
      {"--tensor", "CrossEntropyLoss_output_0"},
      {"--tensor", "gradient/MLP_fc2.weight", "--json"}};
  for (const auto& extra : variants) {
    std::vector<std::string> local_args = {local_};
    std::vector<std::string> s3_args = {uri, "--s3-endpoint", server_->endpoint()};
    local_args.insert(local_args.end(), extra.begin(), extra.end());
    s3_args.insert(s3_args.end(), extra.begin(), extra.end());
    const auto local = run_cli("inspect", local_args);
    const auto s3 = run_cli("inspect", s3_args);
    SCOPED_TRACE(s3_args.back());
    EXPECT_EQ(local.exit_code, 0) << local.err;
    EXPECT_EQ(s3.exit_code, 0) << s3.err;
    EXPECT_EQ(s3.err, local.err);
    EXPECT_GT(local.out.size(), 200u);
    // The same output, but for where the trial is.
    std::string expected = local.out;
    for (std::size_t at = expected.find(local_); at != std::string::npos;
         at = expected.find(local_, at + uri.size())) {
      expected.replace(at, local_.size(), uri);
    }
    EXPECT_EQ(s3.out, expected);
  }
}

TEST_F(S3ReplayTest, AReplayResumesWhenTheServerGoesAwayAndComesBack) {
  const std::string uri = upload_job("outage");
  const auto local = run_cli("replay", rule_args({local_}));
  testing::TcpProxy proxy(server_->port());
  // Down after the first answers (the checks, the listing and some of the files), for longer
  // than several retries' backoff.
  constexpr std::size_t kChunksBeforeOutage = 40;
  proxy.outage_after(kChunksBeforeOutage, std::chrono::milliseconds(1500));
  const auto s3 = run_cli("replay", rule_args({uri, "--s3-endpoint", proxy.endpoint(),
                                               "--s3-retries", "10", "--threads", "2"}));
  EXPECT_EQ(proxy.outages(), 1u);
  // Mid-replay: much was still to be read when the server went away.
  EXPECT_GT(proxy.chunks_forwarded(), 2 * kChunksBeforeOutage);
  EXPECT_EQ(s3.exit_code, local.exit_code) << s3.err;
  EXPECT_EQ(events_without_time(s3.out), events_without_time(local.out));
}

TEST_F(S3ReplayTest, AWatchFollowsAJobUploadedStepByStepAndSeesEveryStepOnce) {
  const std::string uri = "s3://" + bucket_ + "/live/job";
  local_ = (scratch_.path() / "job").string();
  JobSimulatorOptions options = job_options(local_);
  std::set<std::string> uploaded;
  // Each step is uploaded once every worker wrote it; the end marker comes with the last.
  options.on_step_written = [&](const SimulatedStep&) {
    testing::upload_new_files(*client_, local_, bucket_, "live/job", uploaded);
  };
  options.step_delay = std::chrono::milliseconds(40);
  auto writer = std::async(std::launch::async, [&] {
    JobSimulator(options).run();
    testing::upload_new_files(*client_, local_, bucket_, "live/job", uploaded);
  });
  const auto watched = run_cli(
      "watch", rule_args({uri, "--s3-endpoint", server_->endpoint(), "--poll-interval", "0.1"}));
  writer.get();
  const auto local = run_cli("replay", rule_args({local_}));
  EXPECT_EQ(watched.exit_code, 1) << watched.err;
  EXPECT_THAT(watched.err, HasSubstr("24 steps (0 incomplete), 48 index files"));
  const auto fired = fired_steps(watched.out);
  EXPECT_EQ(fired.size(), 12u);  // steps 12..23
  for (const auto& [step, times] : fired) {
    EXPECT_GE(step, 12);
    EXPECT_EQ(times, 1) << "step " << step;
  }
  EXPECT_EQ(events_without_time(watched.out), events_without_time(local.out));
}

TEST_F(S3ReplayTest, ARuleOverLossesFetchesOnlyTheLossRecordOfEachEventFileOnTheWire) {
  const std::string uri = upload_job("selective");
  const std::vector<std::string> rule = {"--rule", "LossNotDecreasing", "--format", "json"};
  std::vector<std::string> local_args = {local_};
  local_args.insert(local_args.end(), rule.begin(), rule.end());
  const auto local = run_cli("replay", local_args);
  testing::TcpProxy proxy(server_->port());
  std::vector<std::string> s3_args = {uri, "--s3-endpoint", proxy.endpoint()};
  s3_args.insert(s3_args.end(), rule.begin(), rule.end());
  const auto s3 = run_cli("replay", s3_args);
  EXPECT_EQ(s3.exit_code, local.exit_code) << s3.err;
  EXPECT_EQ(events_without_time(s3.out), events_without_time(local.out));
  EXPECT_EQ(s3.err, local.err);  // the same tensors decoded and bytes read

  // What went over the wire for each event file: one GET of the loss record's bytes, nothing of
  // the gradients, weights or activations stored around it.
  const auto expected = ranges_of(local_, "CrossEntropyLoss_output_0");
  ASSERT_EQ(expected.size(), 48u);  // 24 steps, 2 workers
  const std::string events_at = "/" + bucket_ + "/selective/job/" + std::string(kEventsDir);
  std::map<std::string, std::vector<testing::ProxiedRequest>> asked;
  std::size_t requests = 0;
  for (const auto& request : proxy.requests()) {
    ++requests;
    if (!request.target.starts_with(events_at)) continue;
    asked[request.target.substr(events_at.size() - kEventsDir.size())].push_back(request);
  }
  EXPECT_GT(requests, expected.size());  // the index files, collections and listings too
  ASSERT_EQ(asked.size(), expected.size());
  for (const auto& [file, range] : expected) {
    SCOPED_TRACE(file);
    const auto it = asked.find(file);
    ASSERT_NE(it, asked.end());
    ASSERT_EQ(it->second.size(), 1u);
    EXPECT_EQ(it->second.front().method, "GET");
    EXPECT_EQ(it->second.front().range, range);
  }
}

// A key that may list part of a trial but not all of it (moto without the tests' signature fix
// refuses every listing whose prefix holds a '/'): the replay's first look passes, the source's
// listing of collections/ is refused. That once aborted the process (SIGABRT, exit 134, no line:
// a std::thread destroyed joinable). Now: a line naming the refusal, every rule in Error (it
// did not see the job), exit status 2.
TEST_F(S3ReplayTest, AListingRefusedMidReplayIsAnErrorNotAnAbort) {
  const std::string uri = upload_job("refused");
  server_->refuse_listings_under(bucket_, "refused/job/collections/");
  const auto outcome = run_cli("replay", rule_args({uri, "--s3-endpoint", server_->endpoint()}));
  EXPECT_EQ(outcome.exit_code, cli::kExitError) << outcome.err;
  EXPECT_NE(outcome.err.find("1 problems reported"), std::string::npos) << outcome.err;
  bool status_seen = false;
  std::istringstream lines(outcome.out);
  for (std::string line; std::getline(lines, line);) {
    const auto event = boost::json::parse(line).as_object();
    if (event.at("kind") != "status") continue;
    status_seen = true;
    EXPECT_EQ(event.at("status"), "Error") << line;
    const std::string message(event.at("message").as_string());
    // The refused listing named with its prefix.
    EXPECT_EQ(message.rfind("the job could not be read to the end: s3://" + bucket_ +
                                "/refused/job/collections/ (listing): ",
                            0),
              0u)
        << line;
    EXPECT_NE(message.find("HTTP 403 AccessDenied"), std::string::npos) << line;
  }
  EXPECT_TRUE(status_seen) << outcome.out;
}

// The same key, watched (issue 22, defect 2): a trial at the bucket's root, every listing
// with a prefix refused, so the command's first look (no prefix) passes and every look of the
// watch after it fails. Stopped with SIGTERM, the watch once ended in "NoIssuesFound (fired 0
// times in 0 steps evaluated)". A rule that read nothing is in Error, and the exit status is 2.
TEST_F(S3ReplayTest, AWatchWhoseEveryListingIsRefusedEndsInErrorNotAnAllClear) {
  local_ = (scratch_.path() / "job").string();
  JobSimulator(job_options(local_)).run();
  const std::string bucket = server_->new_bucket("root");
  client_->create_bucket(bucket);
  testing::upload_folder(*client_, local_, bucket, "");
  for (const std::string prefix : {"collections/", "index/", "events/", "training_job_end"}) {
    server_->refuse_listings_under(bucket, prefix);
  }
  testing::ChildProcess watch({testing::rulestream_binary().string(), "watch", "s3://" + bucket,
                               "--s3-endpoint", server_->endpoint(), "--poll-interval", "0.1",
                               "--rule", "ExplodingTensor", "--format", "json"});
  using Clock = testing::ChildProcess::Clock;
  // Let it try: the refusal is said as it happens.
  EXPECT_TRUE(
      watch.read_until([&] { return watch.err().find("AccessDenied") != std::string::npos; },
                       Clock::now() + std::chrono::seconds(20)))
      << watch.err();
  watch.signal(SIGTERM);
  const auto exit_code = watch.wait_for_exit(Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(exit_code.has_value()) << "the watch ignored SIGTERM; stderr:\n" << watch.err();
  EXPECT_EQ(*exit_code, cli::kExitError) << watch.err();
  EXPECT_THAT(watch.out(), ::testing::Not(HasSubstr("NoIssuesFound"))) << watch.out();
  bool status_seen = false;
  std::istringstream lines(watch.out());
  for (std::string line; std::getline(lines, line);) {
    const auto event = boost::json::parse(line).as_object();
    if (event.at("kind") != "status") continue;
    status_seen = true;
    EXPECT_EQ(event.at("status"), "Error") << line;
    EXPECT_THAT(std::string(event.at("message").as_string()), HasSubstr("AccessDenied")) << line;
  }
  EXPECT_TRUE(status_seen) << watch.out() << watch.err();
}

// An overloaded or failing S3 answers 503 SlowDown, 500 InternalError or 429: the client backs off
// and tries again, and the replay gives the events a folder gives. Each bucket gets its own
// failures, served by the server itself (all of them, checked).
TEST_F(S3ReplayTest, RetriesThroughSlowDownInternalErrorAndTooManyRequests) {
  upload_job("retried");
  const auto local = run_cli("replay", rule_args({local_}));
  const struct {
    int status;
    std::string code;
  } failures[] = {{503, "SlowDown"}, {500, "InternalError"}, {429, "TooManyRequests"}};
  for (const auto& failure : failures) {
    SCOPED_TRACE(failure.code);
    const std::string bucket = server_->new_bucket("retried");
    client_->create_bucket(bucket);
    testing::upload_folder(*client_, local_, bucket, "retried/job");
    server_->fail_next_requests(bucket, 4, failure.status, failure.code);
    const auto s3 = run_cli("replay", rule_args({"s3://" + bucket + "/retried/job", "--s3-endpoint",
                                                 server_->endpoint(), "--s3-retries", "6"}));
    EXPECT_EQ(server_->failures_served(bucket), 4);
    EXPECT_EQ(s3.exit_code, local.exit_code) << s3.err;
    EXPECT_EQ(events_without_time(s3.out), events_without_time(local.out));
  }
  // Past the retries, the failure is an error naming it, not a crash.
  const std::string bucket = server_->new_bucket("exhausted");
  client_->create_bucket(bucket);
  testing::upload_folder(*client_, local_, bucket, "retried/job");
  server_->fail_next_requests(bucket, 1000, 503, "SlowDown");
  const auto exhausted =
      run_cli("replay", rule_args({"s3://" + bucket + "/retried/job", "--s3-endpoint",
                                   server_->endpoint(), "--s3-retries", "2"}));
  EXPECT_EQ(exhausted.exit_code, cli::kExitError);
  EXPECT_NE(exhausted.err.find("SlowDown"), std::string::npos) << exhausted.err;
}

// A 5xx on a read of a record range (not a listing): a rule over the losses reads only their
// records, by range; the first three such reads are refused with 503 and retried, and the events
// are the folder's.
TEST_F(S3ReplayTest, RetriesARangedReadThatGetsA5xx) {
  upload_job("ranged");
  const std::vector<std::string> loss_rule = {"--rule", "LossNotDecreasing", "--format", "json"};
  std::vector<std::string> local_args = {local_};
  local_args.insert(local_args.end(), loss_rule.begin(), loss_rule.end());
  const auto local = run_cli("replay", local_args);
  const std::string bucket = server_->new_bucket("ranged");
  client_->create_bucket(bucket);
  testing::upload_folder(*client_, local_, bucket, "ranged/job");
  server_->fail_next_requests(bucket, 3, 503, "SlowDown",
                              testing::S3TestServer::Failing::RangedReads);
  std::vector<std::string> s3_args = {"s3://" + bucket + "/ranged/job", "--s3-endpoint",
                                      server_->endpoint(), "--s3-retries", "6"};
  s3_args.insert(s3_args.end(), loss_rule.begin(), loss_rule.end());
  const auto s3 = run_cli("replay", s3_args);
  EXPECT_EQ(server_->failures_served(bucket), 3);  // ranged reads were made, and refused
  EXPECT_EQ(s3.exit_code, local.exit_code) << s3.err;
  EXPECT_EQ(events_without_time(s3.out), events_without_time(local.out));
}

TEST_F(S3ReplayTest, AMissingBucketIsAOneLineErrorNamingBucketAndPrefix) {
  const std::string missing = server_->new_bucket("absent");
  const std::string uri = "s3://" + missing + "/some/job";
  for (const std::string command : {"replay", "inspect", "watch"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args = {uri, "--s3-endpoint", server_->endpoint()};
    if (command != "inspect") args = rule_args(args);
    testing::expect_one_line_error(
        run_cli(command, args), command,
        {uri + ": no such bucket '" + missing + "'", "HTTP 404 NoSuchBucket"});
  }
}

TEST_F(S3ReplayTest, AnEmptyOrWrongPrefixIsAOneLineErrorForReplayAndInspect) {
  upload_job("right");
  client_->put(bucket_, "wrong/notes.txt", testing::bytes_of("not a training job"));
  // Empty; holding something else; the job's parent; a string prefix of the job's prefix (which
  // must not reach into right/job/).
  const std::vector<std::pair<std::string, std::string>> places = {
      {"nothing", "nothing/"}, {"wrong", "wrong/"}, {"right", "right/"}, {"right/jo", "right/jo/"}};
  for (const auto& [prefix, as_listed] : places) {
    const std::string uri = "s3://" + bucket_ + "/" + prefix;
    const std::vector<std::string> fragments = {
        uri + ": no smdebug trial under prefix '" + as_listed + "' of bucket '" + bucket_ + "'",
        "empty or wrong prefix"};
    SCOPED_TRACE(uri);
    testing::expect_one_line_error(
        run_cli("replay", rule_args({uri, "--s3-endpoint", server_->endpoint()})), "replay",
        fragments);
    testing::expect_one_line_error(run_cli("inspect", {uri, "--s3-endpoint", server_->endpoint()}),
                                   "inspect", fragments);
    testing::expect_one_line_error(
        run_cli("inspect", {uri, "--s3-endpoint", server_->endpoint(), "--json"}), "inspect",
        fragments);
  }
  // The bucket's top, which holds only folders.
  const std::string top = "s3://" + bucket_;
  testing::expect_one_line_error(
      run_cli("inspect", {top, "--s3-endpoint", server_->endpoint()}), "inspect",
      {top + ": no smdebug trial at the top of bucket '" + bucket_ + "' (", "empty or wrong"});
}

TEST_F(S3ReplayTest, AWatchOfAnEmptyPrefixSaysOnceThatItWaitsThenFollowsTheJob) {
  const std::string uri = "s3://" + bucket_ + "/later/job";
  local_ = (scratch_.path() / "job").string();
  JobSimulator(job_options(local_)).run();
  testing::TcpProxy proxy(server_->port());
  // The job appears once the watch has looked at the empty prefix again (a second look for
  // its end marker: the first is the command's own, the next the wait's poll). Had it stopped
  // polling, the writer would give up waiting and the test fail (`polled`), not pass late.
  std::atomic<bool> polled{false};
  auto writer = std::async(std::launch::async, [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto requests = proxy.requests();
      const auto marker_looks =
          std::count_if(requests.begin(), requests.end(), [](const testing::ProxiedRequest& made) {
            return made.target.find("training_job_end.ts") != std::string::npos;
          });
      if (marker_looks >= 2) {
        polled = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // One by one in path order, as a job writes them: the end marker last.
    std::set<std::string> uploaded;
    testing::upload_new_files(*client_, local_, bucket_, "later/job", uploaded);
  });
  const auto watched = run_cli(
      "watch", rule_args({uri, "--s3-endpoint", proxy.endpoint(), "--poll-interval", "0.1"}));
  writer.get();
  EXPECT_TRUE(polled) << "the watch never looked at the empty prefix again";
  const auto local = run_cli("replay", rule_args({local_}));
  EXPECT_EQ(watched.exit_code, local.exit_code) << watched.err;
  const std::string waiting =
      "rulestream watch: " + uri + ": no trial files yet; waiting for the job to appear\n";
  EXPECT_TRUE(watched.err.starts_with(waiting)) << watched.err;
  EXPECT_EQ(watched.err.find("waiting", waiting.size()), std::string::npos) << watched.err;
  EXPECT_THAT(watched.err, HasSubstr("rulestream watch: 24 steps (0 incomplete), 48 index files"));
  EXPECT_EQ(events_without_time(watched.out), events_without_time(local.out));
}

TEST_F(S3ReplayTest, WrongCredentialsAreAOneLineErrorWithoutTheSecret) {
  const std::string uri = upload_job("denied");
  ::setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value", 1);
  const auto outcome = run_cli("replay", rule_args({uri, "--s3-endpoint", server_->endpoint()}));
  server_->export_environment();
  testing::expect_one_line_error(outcome, "replay",
                                 {"s3://" + bucket_, "access denied", "SignatureDoesNotMatch"});
  EXPECT_THAT(outcome.err, ::testing::Not(HasSubstr("wrong-secret-value")));
}

TEST_F(S3ReplayTest, ASlowServerIsWaitedForWithinTheTimeoutAndReportedBeyondIt) {
  const std::string uri = upload_job("slow");
  testing::TcpProxy proxy(server_->port());
  proxy.set_response_delay(std::chrono::milliseconds(100));
  const auto slow =
      run_cli("replay", rule_args({uri, "--s3-endpoint", proxy.endpoint(), "--s3-timeout", "5"}));
  EXPECT_EQ(slow.exit_code, 1) << slow.err;
  EXPECT_EQ(events_without_time(slow.out),
            events_without_time(run_cli("replay", rule_args({local_})).out));
  proxy.set_response_delay(std::chrono::milliseconds(1500));
  const auto too_slow = run_cli("replay", rule_args({uri, "--s3-endpoint", proxy.endpoint(),
                                                     "--s3-timeout", "0.3", "--s3-retries", "1"}));
  testing::expect_one_line_error(too_slow, "replay",
                                 {"s3://" + bucket_, "Operation timed out", "after 2 attempts"});
}

// Ctrl-C during a replay (a slow server makes it last): the steps begun are finished, the
// rest is not read, every rule that did not fire says the replay was interrupted, and the exit
// status is 2 whatever fired: a CI gate must not pass on part of a job.
TEST_F(S3ReplayTest, AnInterruptedReplayExitsTwoAndSaysWhereItStopped) {
  const std::string uri = upload_job("interrupted");
  testing::TcpProxy proxy(server_->port());
  proxy.set_response_delay(std::chrono::milliseconds(100));
  auto replay = std::async(std::launch::async, [&] {
    return run_cli("replay", {uri, "--s3-endpoint", proxy.endpoint(), "--threads", "1", "--rule",
                              "AllZero", "--format", "json"});
  });
  // Once the index files are being read: the first GET of one.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const auto reading_index = [&] {
    const auto requests = proxy.requests();
    return std::any_of(requests.begin(), requests.end(), [](const testing::ProxiedRequest& made) {
      return made.method == "GET" && made.target.find("/index/") != std::string::npos;
    });
  };
  while (!reading_index() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(::getpid(), SIGINT);  // the CLI's own handler stops the replay and reports
  const auto outcome = replay.get();
  EXPECT_EQ(outcome.exit_code, cli::kExitError) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::ContainsRegex(
                               "rulestream replay: interrupted: [1-9][0-9]* index files were not "
                               "read"));
  bool status_seen = false;
  std::istringstream lines(outcome.out);
  for (std::string line; std::getline(lines, line);) {
    const auto event = boost::json::parse(line).as_object();
    if (event.at("kind") != "status") continue;
    status_seen = true;
    EXPECT_EQ(event.at("status"), "Error") << line;
    EXPECT_THAT(std::string(event.at("message").as_string()),
                HasSubstr("interrupted: not read to the end"))
        << line;
  }
  EXPECT_TRUE(status_seen) << outcome.out;
}

}  // namespace
}  // namespace rulestream
