// `rulestream serve --jobs s3://bucket/prefix`: a live process whose roots are S3 prefixes on the
// tests' S3 server (moto), jobs uploaded under them while it runs, asked over HTTP what it knows.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

#include "apps/simulator/job_simulator.hpp"
#include "apps/simulator/tensorboard_simulator.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/serve_process.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;
using testing::find_job;
using testing::rule_of;
using testing::ServeProcess;
using testing::state_of;
using testing::TempDir;

class ServeS3Test : public testing::S3ServerTest {
 protected:
  ServeS3Test() : S3ServerTest("serve") {}

  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    server_->export_environment();  // the serve child inherits the credentials
  }

  std::string uri(const std::string& prefix) const { return "s3://" + bucket_ + "/" + prefix; }

  // Uploads the folder one file at a time in path order, as a job syncing to S3 does: its end
  // marker (training_job_end.ts sorts after collections/, events/ and index/) lands last.
  void upload(const std::filesystem::path& folder, const std::string& prefix) const {
    std::set<std::string> none;
    testing::upload_new_files(*client_, folder, bucket_, prefix, none);
  }

  std::vector<std::string> serve_args(std::vector<std::string> roots) const {
    std::vector<std::string> args;
    for (auto& root : roots) {
      args.push_back("--jobs");
      args.push_back(std::move(root));
    }
    for (const char* arg : {"--rule", "VanishingGradient", "--rule", "NonFinite", "--idle-timeout",
                            "3", "--poll-interval", "0.2", "--s3-endpoint"}) {
      args.emplace_back(arg);
    }
    args.push_back(server_->endpoint());
    return args;
  }

  TempDir scratch_;
};

// Serve starts on a prefix with nothing under it yet (a prefix exists once written to); jobs
// are uploaded under it while it runs: an smdebug job whose gradients vanish, a TensorBoard
// logdir that explodes, a job whose own rules file does not parse, and one whose prefix this
// key may not list. Another root holds a job of the same name. Each ends with what its data
// says, and the broken and refused ones in Error with their reasons, stalling no other.
TEST_F(ServeS3Test, FindsJobsUploadedWhileItRunsAndEndsEachWithItsStatuses) {
  ServeProcess serve(serve_args({uri("team/jobs"), uri("team/more")}));
  ASSERT_NE(serve.port(), 0);
  EXPECT_EQ(serve.get_json("/api/jobs").at("jobs").as_array().size(), 0u);

  // Not jobs: an object directly under the root, and a prefix beside the root.
  client_->put(bucket_, "team/jobs/README.txt", testing::bytes_of("not a job"));
  client_->put(bucket_, "team/jobsarchive/x/training_job_end.ts", testing::bytes_of(""));

  JobSimulatorOptions smdebug;
  smdebug.output = scratch_.path() / "vg";
  smdebug.scenario = JobScenario::VanishingGradients;
  smdebug.steps = 40;
  const JobSimulator simulator(smdebug);
  simulator.run();
  upload(smdebug.output, "team/jobs/vg");

  TensorBoardSimulatorOptions tensorboard;
  tensorboard.output = scratch_.path() / "tb";
  tensorboard.scenario = TensorBoardScenario::Exploding;
  tensorboard.steps = 200;
  simulate_tensorboard(tensorboard);
  upload(tensorboard.output, "team/jobs/tb");

  JobSimulatorOptions small;
  small.output = scratch_.path() / "broken";
  small.steps = 4;
  JobSimulator(small).run();
  // Its rules file goes up first: a job's own rules are read when it starts, which is as soon
  // as its first trial file is listed.
  client_->put(bucket_, "team/jobs/broken/rulestream-rules.json",
               testing::bytes_of("{\"rules\": ["));
  upload(small.output, "team/jobs/broken");

  // A job still being written (no end marker yet), whose prefix may not be listed: its first
  // look (is there an end marker, a collections/ object?) is refused.
  server_->refuse_listings_under(bucket_, "team/jobs/refused/");
  std::filesystem::remove(small.output / "training_job_end.ts");
  upload(small.output, "team/jobs/refused");

  // The other root's "vg", once this root's has its id.
  ASSERT_TRUE(serve.wait_for_jobs([](const json::value& jobs) { return find_job(jobs, "vg"); },
                                  std::chrono::seconds(30)))
      << serve.log();
  upload(smdebug.output, "team/more/vg");

  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) {
        return state_of(jobs, "vg") == "Finished" && state_of(jobs, "vg-2") == "Finished" &&
               state_of(jobs, "tb") == "Finished" && state_of(jobs, "broken") == "Error" &&
               state_of(jobs, "refused") == "Error";
      },
      std::chrono::seconds(90)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const json::value jobs = serve.get_json("/api/jobs");
  EXPECT_EQ(jobs.at("jobs").as_array().size(), 5u) << jobs;

  // Both copies of the smdebug job: every gradient is tiny from the fault step on.
  const std::int64_t vanishing_steps = smdebug.steps - simulator.fault_step();
  for (const auto& [id, prefix] : {std::pair{"vg", "team/jobs/vg"}, {"vg-2", "team/more/vg"}}) {
    const json::object& vg = *find_job(jobs, id);
    EXPECT_EQ(vg.at("format").as_string(), "smdebug") << id;
    EXPECT_EQ(vg.at("path").as_string(), uri(prefix)) << id;
    EXPECT_EQ(vg.at("last_step").as_int64(), smdebug.steps - 1) << id;
    EXPECT_EQ(rule_of(vg, "VanishingGradient").at("status").as_string(), "IssuesFound") << id;
    EXPECT_EQ(rule_of(vg, "VanishingGradient").at("firings").as_int64(), vanishing_steps) << id;
    EXPECT_EQ(rule_of(vg, "NonFinite").at("status").as_string(), "NoIssuesFound") << id;
  }

  // The logdir, followed by the S3 logdir reader: NonFinite fires once for each of the two
  // series that turn NaN; there are no gradient histograms for VanishingGradient.
  const json::object& tb = *find_job(jobs, "tb");
  EXPECT_EQ(tb.at("format").as_string(), "tensorboard");
  EXPECT_EQ(tb.at("last_step").as_int64(), tensorboard.steps - 1);
  EXPECT_EQ(rule_of(tb, "NonFinite").at("status").as_string(), "IssuesFound");
  EXPECT_EQ(rule_of(tb, "NonFinite").at("firings").as_int64(), 2);
  EXPECT_EQ(rule_of(tb, "VanishingGradient").at("status").as_string(), "Error");

  // The job's own rules file, read from S3, does not parse.
  const std::string broken(find_job(jobs, "broken")->at("error").as_string());
  EXPECT_NE(broken.find(uri("team/jobs/broken") + "/rulestream-rules.json"), std::string::npos)
      << broken;

  const std::string refused(find_job(jobs, "refused")->at("error").as_string());
  EXPECT_TRUE(find_job(jobs, "refused")->at("format").is_null());  // never looked at
  EXPECT_EQ(refused.rfind(uri("team/jobs/refused") + ": ", 0), 0u) << refused;
  EXPECT_NE(refused.find("HTTP 403 AccessDenied"), std::string::npos) << refused;

  EXPECT_EQ(find_job(jobs, "README.txt"), nullptr);
  EXPECT_EQ(find_job(jobs, "x"), nullptr);
  EXPECT_EQ(serve.stop(), 0) << serve.log();
}

// A root listing that fails while serve runs is one line naming the root, said once; it is
// tried again every poll, and the other root's jobs are found and run meanwhile.
TEST_F(ServeS3Test, ARootWhoseListingFailsIsSaidAndTheOthersGoOn) {
  ServeProcess serve(serve_args({uri("locked"), uri("open")}));
  ASSERT_NE(serve.port(), 0);
  server_->refuse_listings_under(bucket_, "locked/");

  JobSimulatorOptions job;
  job.output = scratch_.path() / "job";
  job.steps = 6;
  JobSimulator(job).run();
  upload(job.output, "open/run-1");

  ASSERT_TRUE(serve.wait_for_jobs(
      [](const json::value& jobs) { return state_of(jobs, "run-1") == "Finished"; },
      std::chrono::seconds(60)))
      << serve.get("/api/jobs").body << "\n"
      << serve.log();
  const std::string said = uri("locked") + ": cannot list the jobs: ";
  const auto first = serve.log().find(said);
  ASSERT_NE(first, std::string::npos) << serve.log();
  EXPECT_NE(serve.log().find("HTTP 403 AccessDenied", first), std::string::npos) << serve.log();
  EXPECT_EQ(serve.log().find(said, first + 1), std::string::npos) << "said twice:\n" << serve.log();
  EXPECT_EQ(serve.get("/healthz").status, 200);
  EXPECT_EQ(serve.stop(), 0) << serve.log();
}

// A root that cannot be served is refused at start, one line naming it: a bucket that does not
// exist, a prefix this key may not list.
TEST_F(ServeS3Test, ARootThatDoesNotExistOrIsRefusedIsAClearError) {
  const auto serve = [&](const std::string& root) {
    return testing::run_cli("serve", {"--jobs", root, "--rule", "NonFinite", "--s3-endpoint",
                                      server_->endpoint(), "--listen", "127.0.0.1:0"});
  };
  const std::string missing = "s3://" + server_->new_bucket("absent") + "/jobs";
  auto outcome = serve(missing);
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find(missing + ": no such bucket"), std::string::npos) << outcome.err;

  server_->refuse_listings_under(bucket_, "private/");
  outcome = serve(uri("private/jobs"));
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find(uri("private/jobs") + ": cannot list the jobs: "), std::string::npos)
      << outcome.err;
  EXPECT_NE(outcome.err.find("HTTP 403 AccessDenied"), std::string::npos) << outcome.err;
}

}  // namespace
}  // namespace rulestream
