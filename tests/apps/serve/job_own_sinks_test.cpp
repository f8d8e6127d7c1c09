// JobOwnSinks: the sinks of a job's own rules file, made by the instance that delivers the job's
// events from the stream, from the file in the job's folder.
#include "apps/serve/job_own_sinks.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/graph/sink_factory.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

RuleEvent fired(std::int64_t step) {
  RuleEvent event;
  event.trial = "job";
  event.rule_configuration = "NF";
  event.rule = "NonFinite";
  event.global_step = step;
  event.message = "step " + std::to_string(step);
  return event;
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class JobOwnSinksTest : public ::testing::Test {
 protected:
  std::filesystem::path job_with_rules(const std::string& name, const std::string& sinks) {
    const auto job = root_.path() / name;
    std::filesystem::create_directories(job);
    testing::write_text_file(job / "rulestream-rules.json",
                             R"({"rules": [{"RuleParameters": {"rule_to_invoke": "NonFinite"}}],
                                 "sinks": )" +
                                 sinks + "}");
    return job;
  }
  std::string file_sink(const std::string& name) const {
    return R"({"type": "file", "path": ")" + (out_.path() / name).string() + R"("})";
  }

  testing::TempDir root_;
  testing::TempDir out_;
  ServiceMetrics metrics_;
  std::ostringstream stdout_;
  JobOwnSinks sinks_{"rulestream-rules.json", {}, stdout_, metrics_, 10min};
};

TEST_F(JobOwnSinksTest, EachOfTheRulesFilesSinksGetsWhatIsWrittenToIt) {
  const auto job =
      job_with_rules("job", "[" + file_sink("first.jsonl") + R"(, {"type": "stdout"}, )" +
                                file_sink("third.jsonl") + "]");
  sinks_.sink(job.string(), 0).write(fired(3));
  sinks_.sink(job.string(), 2).write(fired(4));
  sinks_.sink(job.string(), 1).write(fired(5));
  sinks_.sink(job.string(), 0).write(fired(6));
  for (std::size_t i = 0; i < 3; ++i) sinks_.sink(job.string(), i).flush();

  const auto first = lines_of(out_.path() / "first.jsonl");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_NE(first[0].find("\"global_step\": 3"), std::string::npos) << first[0];
  EXPECT_NE(first[1].find("\"global_step\": 6"), std::string::npos) << first[1];
  const auto third = lines_of(out_.path() / "third.jsonl");
  ASSERT_EQ(third.size(), 1u);
  EXPECT_NE(third[0].find("\"global_step\": 4"), std::string::npos) << third[0];
  EXPECT_NE(stdout_.str().find("step 5"), std::string::npos) << stdout_.str();
  EXPECT_EQ(sinks_.jobs_held(), 1u);  // one job, its file read once
}

TEST_F(JobOwnSinksTest, AJobWithoutItsFileOrWithoutTheSinkIsAnErrorNamingTheFile) {
  const auto gone = root_.path() / "gone";
  std::filesystem::create_directories(gone);
  try {
    sinks_.sink(gone.string(), 0);
    FAIL() << "no rules file, no sink";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find((gone / "rulestream-rules.json").string()),
              std::string::npos)
        << error.what();
  }
  const auto job = job_with_rules("job", "[" + file_sink("only.jsonl") + "]");
  try {
    sinks_.sink(job.string(), 1);
    FAIL() << "a rules file of one sink has no second";
  } catch (const std::exception& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find((job / "rulestream-rules.json").string()), std::string::npos) << message;
    EXPECT_NE(message.find("1 sink(s), not a sink 2"), std::string::npos) << message;
  }
  // A sink that cannot be made (a file sink in a folder that is not there) names the file too.
  const auto bad =
      job_with_rules("bad", R"([{"type": "file", "path": ")" +
                                (out_.path() / "no/such/dir/x.jsonl").string() + R"("}])");
  try {
    sinks_.sink(bad.string(), 0);
    FAIL() << "the sink's folder is not there";
  } catch (const std::exception& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find((bad / "rulestream-rules.json").string() + ", sink 1"),
              std::string::npos)
        << message;
  }
}

TEST_F(JobOwnSinksTest, AFailureIsRememberedForAMomentThenTheFileIsReadAgain) {
  const auto job = root_.path() / "late";
  std::filesystem::create_directories(job);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(sinks_.sink(job.string(), 0, start), StorageError);
  job_with_rules("late", "[" + file_sink("late.jsonl") + "]");
  // Within the moment: the failure stands, the file not read again.
  EXPECT_THROW(sinks_.sink(job.string(), 0, start + 1s), StorageError);
  // After it: read again, and the sink is there.
  Sink& sink = sinks_.sink(job.string(), 0, start + 10s);
  sink.write(fired(1));
  sink.flush();
  EXPECT_EQ(lines_of(out_.path() / "late.jsonl").size(), 1u);
}

TEST_F(JobOwnSinksTest, AJobsSinksAreLetGoOfAfterTheIdleTime) {
  const auto job = job_with_rules("job", "[" + file_sink("idle.jsonl") + "]");
  const auto start = std::chrono::steady_clock::now();
  sinks_.sink(job.string(), 0, start).write(fired(1));
  sinks_.sink(job.string(), 0, start + 9min).write(fired(2));  // used: kept from here
  sinks_.let_go_of_idle(start + 18min);
  EXPECT_EQ(sinks_.jobs_held(), 1u);
  sinks_.let_go_of_idle(start + 19min);
  EXPECT_EQ(sinks_.jobs_held(), 0u);
  // Made again for the next event; the file sink appends to what its former self wrote.
  sinks_.sink(job.string(), 0, start + 20min).write(fired(3));
  sinks_.sink(job.string(), 0, start + 20min).flush();
  EXPECT_EQ(lines_of(out_.path() / "idle.jsonl").size(), 3u);
}

// The owner names a job's own sink in its metrics before any instance has made it.
TEST(DescribeSink, SaysWhatTheSinkItselfWouldSay) {
  std::ostringstream out;
  testing::TempDir dir;
  const std::vector<SinkConfig> configs{
      {.name = "", .type = "stdout", .target = ""},
      {.name = "audit", .type = "file", .target = (dir.path() / "a.jsonl").string()},
      {.name = "",
       .type = "webhook",
       .target = "https://hooks.example/services/T0/SECRET",
       .dead_letter_path = (dir.path() / "undelivered.jsonl").string()},
      {.name = "",
       .type = "alertmanager",
       .target = "http://127.0.0.1:9/alerts/SECRET",
       .dead_letter_path = (dir.path() / "dead.jsonl").string()},
  };
  for (const SinkConfig& config : configs) {
    EXPECT_EQ(describe_sink(config), make_sink(config, out)->describe()) << config.type;
    EXPECT_EQ(describe_sink(config).find("SECRET"), std::string::npos) << config.type;
  }
}

}  // namespace
}  // namespace rulestream
