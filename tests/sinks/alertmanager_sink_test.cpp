// AlertmanagerSink against an Alertmanager stand-in that checks every payload as Alertmanager's
// API v2 would (tests/support/alertmanager_receiver.hpp).
#include "sinks/alertmanager_sink.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/model/exceptions.hpp"
#include "tests/support/alertmanager_receiver.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/webhook_test_support.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using testing::AlertmanagerReceiver;
using testing::AlertPost;
using testing::read_json_lines;
using testing::ReceivedAlert;
using testing::TempDir;

using Clock = std::chrono::system_clock;

// An event of rule configuration `configuration` (VanishingGradient) on job `job`.
RuleEvent event_of(RuleEvent::Kind kind, const std::string& job, const std::string& configuration,
                   Clock::time_point time) {
  RuleEvent event;
  event.kind = kind;
  event.time = time;
  event.trial = job;
  event.rule_configuration = configuration;
  event.rule = "VanishingGradient";
  return event;
}

RuleEvent finding(const std::string& job, const std::string& configuration, std::int64_t step,
                  Clock::time_point time = Clock::now()) {
  RuleEvent event = event_of(RuleEvent::Kind::ConditionMet, job, configuration, time);
  event.global_step = step;
  event.message = "step " + std::to_string(step) + ": gradient/fc1.weight abs mean 1e-09 < 1e-07";
  return event;
}

RuleEvent final_status(const std::string& job, const std::string& configuration, RuleStatus status,
                       Clock::time_point time = Clock::now()) {
  RuleEvent event = event_of(RuleEvent::Kind::Status, job, configuration, time);
  event.status = status;
  event.message = "2 of 40 steps met the condition";
  return event;
}

AlertmanagerSink::Options fast_options(const AlertmanagerReceiver& receiver,
                                       const std::filesystem::path& dir) {
  AlertmanagerSink::Options options;
  options.url = receiver.url();
  options.resend_interval = 10min;  // no resend unless a test asks for one
  options.delivery = {.timeout = 500ms,
                      .max_attempts = 3,
                      .initial_backoff = 5ms,
                      .max_backoff = 40ms,
                      .dead_letter_path = dir / "dead-letters.jsonl"};
  return options;
}

TEST(AlertmanagerSink, SendsANewAlertAtOnceLabelledByJobAndRule) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  auto options = fast_options(receiver, dir.path());
  options.severity = "critical";
  options.generator_url = "http://rulestream.example:8080/api/jobs/vg";
  AlertmanagerSink sink(options);
  const auto fired_at = Clock::now() - 5s;
  const RuleEvent first = finding("vg", "VG-strict", 6, fired_at);
  sink.write(first);
  sink.flush();

  const auto posts = receiver.posts();
  EXPECT_TRUE(receiver.problems().empty()) << receiver.problems().front();
  ASSERT_EQ(posts.size(), 1u);
  ASSERT_EQ(posts[0].alerts.size(), 1u);
  const ReceivedAlert& alert = posts[0].alerts[0];
  EXPECT_EQ(alert.labels, (std::map<std::string, std::string>{{"alertname", "VG-strict"},
                                                              {"training_job", "vg"},
                                                              {"rule", "VanishingGradient"},
                                                              {"rule_configuration", "VG-strict"},
                                                              {"severity", "critical"}}));
  EXPECT_EQ(alert.annotations.at("description"), first.message);
  EXPECT_EQ(alert.annotations.at("step"), "6");
  EXPECT_NE(alert.annotations.at("summary").find("job vg at step 6"), std::string::npos);
  EXPECT_EQ(alert.generator_url, options.generator_url);
  // It started with its finding (to the millisecond the format carries), and is valid for 4
  // resend intervals (40 min) from when it was sent: Alertmanager keeps it firing that long.
  EXPECT_LT(fired_at - alert.starts_at, 1ms);
  EXPECT_GE(fired_at - alert.starts_at, 0ms);
  EXPECT_GT(alert.ends_at, posts[0].received_at + 39min);
  EXPECT_LT(alert.ends_at, posts[0].received_at + 41min);
  EXPECT_EQ(sink.describe(),
            "alertmanager http://127.0.0.1:" + std::to_string(receiver.port()) + "/…");
  EXPECT_EQ(sink.delivery(), (SinkDeliveryCounts{.delivered = 1}));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "dead-letters.jsonl"));
}

TEST(AlertmanagerSink, LaterFindingsWaitForTheResendAndTheStatusResolves) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  auto options = fast_options(receiver, dir.path());
  options.resend_interval = 300ms;
  AlertmanagerSink sink(options);
  sink.write(finding("vg", "VG", 6));
  sink.write(finding("vg", "VG", 7));  // the alert fires already: no POST of its own

  // Two resends while it fires: the same alert (labels, start), with the latest finding. The
  // first comes a resend interval after the new alert's POST (had the second finding been
  // POSTed at once, it would have come at once).
  ASSERT_TRUE(receiver.wait_for_posts(3, 5s));
  const auto resends = receiver.posts();
  EXPECT_EQ(resends[0].alerts.at(0).annotations.at("step"), "6");
  EXPECT_GE(resends[1].received_at - resends[0].received_at, 250ms);
  for (std::size_t i = 1; i < 3; ++i) {
    ASSERT_EQ(resends[i].alerts.size(), 1u);
    const ReceivedAlert& again = resends[i].alerts[0];
    EXPECT_EQ(again.labels, resends[0].alerts[0].labels);
    EXPECT_EQ(again.starts_at_text, resends[0].alerts[0].starts_at_text);
    EXPECT_EQ(again.annotations.at("step"), "7");
    EXPECT_EQ(again.annotations.at("firings"), "2");
    EXPECT_GT(again.ends_at, resends[i].received_at);  // still firing
  }
  // Resent about every 300 ms (a sleep may run late, never early).
  EXPECT_GE(resends[2].received_at - resends[1].received_at, 250ms);

  const auto ended = Clock::now();
  sink.write(final_status("vg", "VG", RuleStatus::IssuesFound, ended));
  sink.flush();
  const auto posts = receiver.posts();
  const ReceivedAlert& resolved = posts.back().alerts.at(0);
  EXPECT_EQ(resolved.labels, resends[0].alerts[0].labels);
  EXPECT_EQ(resolved.starts_at_text, resends[0].alerts[0].starts_at_text);
  EXPECT_LT(ended - resolved.ends_at, 1ms);  // ended with the status, not in the future
  EXPECT_GE(ended - resolved.ends_at, 0ms);
  EXPECT_EQ(resolved.annotations.at("status"), "IssuesFound");
  EXPECT_EQ(resolved.annotations.at("status_message"), "2 of 40 steps met the condition");

  // Resolved: no resend of it any more.
  const std::size_t count = posts.size();
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(receiver.posts().size(), count);
  EXPECT_TRUE(receiver.problems().empty());
}

// Whether `asked` reached `times` within 5 s (a resend gate's count of its questions).
bool wait_until_asked(const std::atomic<int>& asked, int times) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (asked.load() < times && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  return asked.load() >= times;
}

// A sink whose owner may no longer send (serve: a job taken over while its instance was
// paused) skips its resends, asked each time; the writes themselves are the caller's to gate.
TEST(AlertmanagerSink, SkipsTheResendsItIsNotAllowed) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  auto options = fast_options(receiver, dir.path());
  options.resend_interval = 100ms;
  std::atomic<bool> allowed{false};
  std::atomic<int> asked{0};
  options.may_resend = [&] {
    ++asked;
    return allowed.load();
  };
  AlertmanagerSink sink(options);
  sink.write(finding("vg", "VG", 6));
  ASSERT_TRUE(receiver.wait_for_posts(1, 5s));  // the new alert goes at once
  // Asked at three resends, each refused: nothing more goes out.
  ASSERT_TRUE(wait_until_asked(asked, 3));
  EXPECT_EQ(receiver.posts().size(), 1u);
  // Allowed again: the next resend goes.
  allowed = true;
  ASSERT_TRUE(receiver.wait_for_posts(2, 5s));
  EXPECT_EQ(receiver.posts()[1].alerts.at(0).annotations.at("step"), "6");
  EXPECT_TRUE(receiver.problems().empty());
}

TEST(AlertmanagerSink, AGateThatThrowsSkipsTheResend) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  auto options = fast_options(receiver, dir.path());
  options.resend_interval = 100ms;
  std::atomic<int> asked{0};
  options.may_resend = [&]() -> bool {
    ++asked;
    throw std::runtime_error("Redis could not be reached");
  };
  AlertmanagerSink sink(options);
  sink.write(finding("vg", "VG", 6));
  ASSERT_TRUE(receiver.wait_for_posts(1, 5s));
  ASSERT_TRUE(wait_until_asked(asked, 2));
  EXPECT_EQ(receiver.posts().size(), 1u);
}

TEST(AlertmanagerSink, ARuleThatNeverFiredRaisesNothing) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  AlertmanagerSink sink(fast_options(receiver, dir.path()));
  sink.write(final_status("vg", "VG", RuleStatus::NoIssuesFound));
  sink.write(final_status("vg", "NaN", RuleStatus::Error));
  sink.flush();
  EXPECT_TRUE(receiver.requests().empty());
}

TEST(AlertmanagerSink, KeepsOneAlertPerJobAndRuleAndResendsThemTogether) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  auto options = fast_options(receiver, dir.path());
  options.resend_interval = 1s;  // far beyond the writes and the flush below
  AlertmanagerSink sink(options);
  sink.write(finding("job-a", "VG", 1));
  sink.write(finding("job-b", "VG", 2));
  sink.write(finding("job-a", "LossNotDecreasing", 3));
  sink.write(final_status("job-b", "VG", RuleStatus::IssuesFound));  // only job-b's VG ends
  sink.flush();
  ASSERT_EQ(receiver.posts().size(), 4u);  // three new alerts, one resolved

  ASSERT_TRUE(receiver.wait_for_posts(5, 5s));
  const AlertPost resend = receiver.posts()[4];
  std::set<std::pair<std::string, std::string>> firing;
  for (const auto& alert : resend.alerts) {
    firing.emplace(alert.labels.at("training_job"), alert.labels.at("alertname"));
  }
  EXPECT_EQ(firing, (std::set<std::pair<std::string, std::string>>{
                        {"job-a", "VG"}, {"job-a", "LossNotDecreasing"}}));
  EXPECT_EQ(resend.alerts.size(), 2u);
}

TEST(AlertmanagerSink, RetriesAFailingAlertmanagerThenDelivers) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  receiver.fail_next({503, 500});
  AlertmanagerSink sink(fast_options(receiver, dir.path()));
  sink.write(finding("vg", "VG", 6));
  sink.flush();
  EXPECT_EQ(receiver.requests().size(), 3u);
  EXPECT_EQ(receiver.posts().size(), 1u);
  EXPECT_EQ(sink.delivery(),
            (SinkDeliveryCounts{.delivered = 1, .retries = 2, .failures = 2, .dead_letters = 0}));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "dead-letters.jsonl"));
}

TEST(AlertmanagerSink, DeadLettersWhatADownAlertmanagerNeverTakes) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  receiver.fail_next({503, 503, 503, 503, 503, 503});  // both alerts' 3 attempts
  const auto options = fast_options(receiver, dir.path());
  ::testing::internal::CaptureStderr();
  {
    AlertmanagerSink sink(options);
    sink.write(finding("vg", "VG", 6));
    sink.write(final_status("vg", "VG", RuleStatus::IssuesFound));
    sink.flush();
    EXPECT_EQ(sink.delivery(),
              (SinkDeliveryCounts{.delivered = 0, .retries = 4, .failures = 6, .dead_letters = 2}));
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(receiver.posts().empty());
  const auto dead = read_json_lines(options.delivery.dead_letter_path);
  ASSERT_EQ(dead.size(), 2u);
  // Each dead letter keeps the payload, an array Alertmanager would take once it is back.
  for (const auto& record : dead) {
    std::vector<ReceivedAlert> alerts;
    EXPECT_EQ(testing::check_postable_alerts(record.at("alerts"), alerts), "");
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].labels.at("training_job"), "vg");
    EXPECT_EQ(record.at("attempts"), 3);
    EXPECT_EQ(record.at("alertmanager").as_string(),
              "http://127.0.0.1:" + std::to_string(receiver.port()) + "/…");
  }
  EXPECT_EQ(dead[1].at("alerts").as_array()[0].at("annotations").at("status"), "IssuesFound");
  EXPECT_NE(log.find("new alert (alert VG of job vg) dead-lettered after 3 attempts: HTTP 503"),
            std::string::npos)
      << log;
}

TEST(AlertmanagerSink, NeverShowsTheCredentialsOrTheBearerToken) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  const std::string password = "s3cr3t-passw0rd";
  const std::string token = "bearer-T0KEN-value";
  auto options = fast_options(receiver, dir.path());
  options.url = receiver.url("alerts:" + password);
  options.delivery.bearer_token = token;
  ::testing::internal::CaptureStderr();
  std::string described;
  {
    AlertmanagerSink sink(options);
    described = sink.describe();
    sink.write(finding("vg", "VG", 6));
    sink.flush();
    receiver.fail_next({400});  // refused as bad: dead-lettered, logged
    sink.write(final_status("vg", "VG", RuleStatus::IssuesFound));
    sink.flush();
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(receiver.posts().size(), 1u);
  EXPECT_EQ(receiver.posts()[0].authorization, "Bearer " + token);
  const std::string dead = testing::read_text_file(options.delivery.dead_letter_path);
  for (const std::string& shown : {described, log, dead}) {
    EXPECT_EQ(shown.find(password), std::string::npos) << shown;
    EXPECT_EQ(shown.find(token), std::string::npos) << shown;
  }
  EXPECT_FALSE(dead.empty());
}

TEST(AlertmanagerSink, AddsTheAlertsPathToTheUrlGiven) {
  EXPECT_EQ(AlertmanagerSink::alerts_url("http://am:9093"), "http://am:9093/api/v2/alerts");
  EXPECT_EQ(AlertmanagerSink::alerts_url("http://am:9093/"), "http://am:9093/api/v2/alerts");
  EXPECT_EQ(AlertmanagerSink::alerts_url("https://ops.example/alertmanager/"),
            "https://ops.example/alertmanager/api/v2/alerts");
  EXPECT_EQ(AlertmanagerSink::alerts_url("http://am:9093/api/v2/alerts"),
            "http://am:9093/api/v2/alerts");
}

TEST(AlertmanagerSink, RejectsOptionsItCannotWorkWith) {
  TempDir dir;
  AlertmanagerReceiver receiver;
  const auto options = fast_options(receiver, dir.path());
  auto no_resend = options;
  no_resend.resend_interval = 0ms;
  EXPECT_THROW(AlertmanagerSink{no_resend}, std::invalid_argument);
  auto bad_scheme = options;
  bad_scheme.url = "ftp://127.0.0.1/";
  EXPECT_THROW(AlertmanagerSink{bad_scheme}, std::invalid_argument);
  auto no_severity = options;
  no_severity.severity.clear();
  EXPECT_THROW(AlertmanagerSink{no_severity}, std::invalid_argument);
  auto no_folder = options;
  no_folder.delivery.dead_letter_path = dir.path() / "missing" / "dead.jsonl";
  EXPECT_THROW(AlertmanagerSink{no_folder}, StorageError);
  EXPECT_TRUE(receiver.requests().empty());
}

// The stand-in's own checks: what Alertmanager refuses, it refuses.
TEST(AlertmanagerReceiver, RefusesWhatAlertmanagerRefuses) {
  const auto problem = [](const std::string& body) {
    std::vector<ReceivedAlert> alerts;
    return testing::check_postable_alerts(boost::json::parse(body), alerts);
  };
  EXPECT_EQ(problem(R"([{"labels":{"alertname":"VG"},"startsAt":"2026-11-26T13:00:00.5+01:00"}])"),
            "");
  EXPECT_NE(problem(R"({"labels":{"alertname":"VG"}})"), "");  // not an array
  EXPECT_NE(problem(R"([{"annotations":{}}])"), "");           // no labels
  EXPECT_NE(problem(R"([{"labels":{}}])"), "");                // no label pair
  EXPECT_NE(problem(R"([{"labels":{"job":"a"}}])"), "");       // no alertname
  EXPECT_NE(problem(R"([{"labels":{"alertname":1}}])"), "");
  EXPECT_NE(problem(R"([{"labels":{"alert-name":"x","alertname":"y"}}])"), "");
  EXPECT_NE(problem(R"([{"labels":{"alertname":"VG"},"status":"firing"}])"), "");
  EXPECT_NE(problem(R"([{"labels":{"alertname":"VG"},"startsAt":"2026-11-26 13:00:00"}])"), "");
  EXPECT_NE(problem(R"([{"labels":{"alertname":"VG"},"startsAt":"2026-11-26T13:00:01Z",)"
                    R"("endsAt":"2026-11-26T13:00:00Z"}])"),
            "");
  EXPECT_NE(problem(R"([{"labels":{"alertname":"VG"},"generatorURL":"not a uri"}])"), "");
  Clock::time_point time;
  ASSERT_TRUE(testing::parse_rfc3339("2026-11-26T13:00:00.250+01:00", time));
  EXPECT_EQ(time, Clock::time_point(std::chrono::seconds(1795698000)) - 1h + 250ms);
}

}  // namespace
}  // namespace rulestream
