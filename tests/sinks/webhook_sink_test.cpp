#include "sinks/webhook_sink.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <stdexcept>

#include "core/model/exceptions.hpp"
#include "tests/support/http_receiver.hpp"
#include "tests/support/rule_event_samples.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/webhook_test_support.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using testing::bodies_of;
using testing::fast_webhook_options;
using testing::HttpAction;
using testing::HttpReceiver;
using testing::read_json_lines;
using testing::ReceivedRequest;
using testing::sample_rule_event;
using testing::sample_status_event;
using testing::TempDir;

std::vector<std::string> json_of_steps(int count) {
  std::vector<std::string> bodies;
  for (int step = 0; step < count; ++step) bodies.push_back(sample_rule_event(step).to_json());
  return bodies;
}

void write_steps(WebhookSink& sink, int count) {
  for (int step = 0; step < count; ++step) sink.write(sample_rule_event(step));
}

// Checks at-least-once delivery: every event reached the receiver with exactly one success,
// every other copy of it answered a failure (a retry), and the successes came in write order.
// Returns how many duplicates the retries made.
std::size_t expect_each_delivered_once_in_order(const std::vector<ReceivedRequest>& requests,
                                                const std::vector<std::string>& events) {
  std::map<std::string, int> successes;
  std::map<std::string, int> failures;
  std::vector<std::string> success_order;
  for (const auto& request : requests) {
    if (request.succeeded()) {
      ++successes[request.body];
      success_order.push_back(request.body);
    } else {
      ++failures[request.body];
    }
  }
  EXPECT_EQ(success_order, events);
  std::size_t duplicates = 0;
  for (const auto& event : events) {
    EXPECT_EQ(successes[event], 1) << event;
    duplicates += static_cast<std::size_t>(failures[event]);
  }
  EXPECT_EQ(requests.size(), events.size() + duplicates) << "a request that was no event";
  return duplicates;
}

TEST(WebhookSink, DeliversEveryEventInOrderToAHealthyReceiver) {
  TempDir dir;
  HttpReceiver receiver;
  const auto options = fast_webhook_options(receiver, dir.path());
  WebhookSink sink(options);
  write_steps(sink, 50);
  sink.flush();

  const auto requests = receiver.requests();
  EXPECT_EQ(bodies_of(requests), json_of_steps(50));
  for (const auto& request : requests) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, testing::kSecretWebhookPath);
    EXPECT_EQ(request.content_type, "application/json");
    EXPECT_EQ(request.user_agent, "rulestream/0.1");
  }
  EXPECT_EQ(sink.delivery(), (SinkDeliveryCounts{.delivered = 50}));
  // Nothing was dead-lettered, so there is no dead-letter file, not even an empty one.
  EXPECT_FALSE(std::filesystem::exists(options.dead_letter_path));
}

TEST(WebhookSink, CreatesItsDeadLetterFileAtTheFirstDeadLetterAndAppendsToAnOldOne) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::respond(200), HttpAction::respond(400)});
  const auto options = fast_webhook_options(receiver, dir.path());
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    sink.write(sample_rule_event(0));
    sink.flush();
    EXPECT_FALSE(std::filesystem::exists(options.dead_letter_path));
    sink.write(sample_rule_event(1));  // refused with a 400: dead-lettered at once
    sink.flush();
    ASSERT_EQ(read_json_lines(options.dead_letter_path).size(), 1u);
  }
  {
    receiver.script({HttpAction::respond(400)});
    WebhookSink restarted(options);
    restarted.write(sample_rule_event(2));
  }
  ::testing::internal::GetCapturedStderr();
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].at("event"), boost::json::parse(sample_rule_event(1).to_json()));
  EXPECT_EQ(dead[1].at("event"), boost::json::parse(sample_rule_event(2).to_json()));
}

TEST(WebhookSink, DestructorDeliversWhatIsStillQueued) {
  TempDir dir;
  HttpReceiver receiver;
  {
    WebhookSink sink(fast_webhook_options(receiver, dir.path()));
    write_steps(sink, 20);
  }
  EXPECT_EQ(bodies_of(receiver.requests()), json_of_steps(20));
}

TEST(WebhookSink, RetriesThroughAnOutageWithoutLosingOrReorderingEvents) {
  TempDir dir;
  HttpReceiver receiver;
  // An outage at the start, then a flaky stretch; every event gets at most 4 failures.
  receiver.script({HttpAction::respond(503), HttpAction::respond(408), HttpAction::respond(502),
                   HttpAction::respond(429), HttpAction::respond(200), HttpAction::respond(503),
                   HttpAction::respond(200), HttpAction::respond(200), HttpAction::respond(504)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.max_attempts = 5;
  WebhookSink sink(options);
  write_steps(sink, 10);
  sink.flush();

  EXPECT_EQ(expect_each_delivered_once_in_order(receiver.requests(), json_of_steps(10)), 6u);
  EXPECT_TRUE(read_json_lines(options.dead_letter_path).empty());
  // The script above: 6 failed attempts, each followed by a retry; all 10 events delivered.
  EXPECT_EQ(sink.delivery(),
            (SinkDeliveryCounts{.delivered = 10, .retries = 6, .failures = 6, .dead_letters = 0}));
}

TEST(WebhookSink, RetriesWhenTheReceiverStallsBeyondTheTimeout) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::stall_for(600ms)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.timeout = 100ms;
  WebhookSink sink(options);
  write_steps(sink, 3);
  sink.flush();

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].action.kind, HttpAction::Kind::Stall);
  EXPECT_EQ(requests[0].body, requests[1].body);
  EXPECT_EQ(expect_each_delivered_once_in_order(requests, json_of_steps(3)), 1u);
  EXPECT_TRUE(read_json_lines(options.dead_letter_path).empty());
}

TEST(WebhookSink, RetriesWhenTheConnectionClosesWithoutAnAnswer) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::close_connection(), HttpAction::close_connection()});
  auto options = fast_webhook_options(receiver, dir.path());
  options.max_attempts = 5;  // curl itself may resend once on a reused connection
  WebhookSink sink(options);
  write_steps(sink, 3);
  sink.flush();

  EXPECT_EQ(expect_each_delivered_once_in_order(receiver.requests(), json_of_steps(3)), 2u);
  EXPECT_TRUE(read_json_lines(options.dead_letter_path).empty());
}

TEST(WebhookSink, DeadLettersEveryEventAPermanentlyFailingReceiverRefuses) {
  TempDir dir;
  HttpReceiver receiver(HttpAction::respond(503));
  const auto options = fast_webhook_options(receiver, dir.path());
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    write_steps(sink, 4);
    sink.write(sample_status_event(RuleStatus::IssuesFound));
    sink.flush();
    // 5 events, 3 attempts each, every one failed: 2 retries each, then a dead letter.
    EXPECT_EQ(
        sink.delivery(),
        (SinkDeliveryCounts{.delivered = 0, .retries = 10, .failures = 15, .dead_letters = 5}));
  }
  const std::string log = ::testing::internal::GetCapturedStderr();

  EXPECT_EQ(receiver.requests().size(), 5u * 3u);
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 5u);
  for (std::size_t i = 0; i < dead.size(); ++i) {
    const RuleEvent event = i < 4 ? sample_rule_event(static_cast<int>(i))
                                  : sample_status_event(RuleStatus::IssuesFound);
    EXPECT_EQ(dead[i].at("event"), boost::json::parse(event.to_json()));
    EXPECT_EQ(dead[i].at("attempts"), 3);
    EXPECT_EQ(dead[i].at("error"), "HTTP 503: receiver says no");
  }
  EXPECT_NE(log.find("event for rule VG at step 2 dead-lettered after 3 attempts: HTTP 503"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("status event for rule VG dead-lettered after 3 attempts"), std::string::npos)
      << log;
}

TEST(WebhookSink, DoesNotRetryAClientError) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::respond(400).with_body("invalid_payload")});
  const auto options = fast_webhook_options(receiver, dir.path());
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    write_steps(sink, 2);
    sink.flush();
  }
  ::testing::internal::GetCapturedStderr();

  EXPECT_EQ(bodies_of(receiver.requests()), json_of_steps(2));
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].at("event"), boost::json::parse(sample_rule_event(0).to_json()));
  EXPECT_EQ(dead[0].at("attempts"), 1);
  EXPECT_EQ(dead[0].at("error"), "HTTP 400: invalid_payload");
}

TEST(WebhookSink, DoesNotFollowOrRetryARedirect) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::respond(301)});
  const auto options = fast_webhook_options(receiver, dir.path());
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    sink.write(sample_rule_event(0));
    sink.flush();
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(receiver.requests().size(), 1u);
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].at("attempts"), 1);
  const std::string error(dead[0].at("error").as_string());
  EXPECT_TRUE(error.starts_with("HTTP 301 (redirects are not followed)")) << error;
}

// When even the dead-letter file cannot take the event, stderr gets all of it.
TEST(WebhookSink, PrintsTheEventWhenTheDeadLetterFileFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "needs /dev/full";
  HttpReceiver receiver(HttpAction::respond(400));
  TempDir dir;
  auto options = fast_webhook_options(receiver, dir.path());
  options.dead_letter_path = "/dev/full";
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    sink.write(sample_rule_event(5));
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
  EXPECT_NE(log.find(sample_rule_event(5).to_json()), std::string::npos) << log;
}

TEST(WebhookSink, DeadLettersWhenNothingListens) {
  TempDir dir;
  std::string url;
  {
    HttpReceiver gone;  // frees an ephemeral port that nothing listens on afterwards
    url = gone.url(testing::kSecretWebhookPath);
  }
  WebhookSink::Options options{.url = url,
                               .timeout = 200ms,
                               .max_attempts = 2,
                               .initial_backoff = 1ms,
                               .max_backoff = 5ms,
                               .dead_letter_path = dir.path() / "dead.jsonl"};
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    sink.write(sample_rule_event(0));
  }
  ::testing::internal::GetCapturedStderr();
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].at("attempts"), 2);
  const std::string error(dead[0].at("error").as_string());
  EXPECT_NE(error.find("onnect"), std::string::npos) << error;  // "Failed to connect ..."
}

TEST(WebhookSink, HonoursRetryAfterCappedByMaxBackoff) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::too_many_requests(2), HttpAction::respond(503)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.initial_backoff = 1ms;
  options.max_backoff = 300ms;
  WebhookSink sink(options);
  sink.write(sample_rule_event(0));
  sink.flush();

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(requests[2].succeeded());
  // Retry-After (2 s) capped at max_backoff (300 ms), far above the 1 ms backoff of its own.
  const auto after_429 = requests[1].received_at - requests[0].received_at;
  EXPECT_GE(after_429, 300ms);
  EXPECT_LT(after_429, 2s);
  // The next failure carries no Retry-After: back to the exponential backoff (2 ms).
  EXPECT_LT(requests[2].received_at - requests[1].received_at, 300ms);
}

TEST(WebhookSink, WriteReturnsAtOnceWhileTheReceiverStalls) {
  TempDir dir;
  HttpReceiver receiver;
  constexpr auto kStall = 800ms;
  receiver.script({HttpAction::stall_for(kStall)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.timeout = 5s;  // the stalled answer still counts
  WebhookSink sink(options);
  sink.write(sample_rule_event(0));
  ASSERT_TRUE(receiver.wait_for_requests(1, 5s));  // the worker now waits on the stall

  std::vector<RuleEvent> events;
  for (int step = 1; step <= 100; ++step) events.push_back(sample_rule_event(step));
  const auto start = std::chrono::steady_clock::now();
  for (const auto& event : events) sink.write(event);
  const auto spent = std::chrono::steady_clock::now() - start;
  EXPECT_LT(spent, kStall / 8) << "write() waited for the network";

  sink.flush();
  EXPECT_EQ(bodies_of(receiver.requests()), json_of_steps(101));
}

TEST(WebhookSink, FlushWaitsForAnEventThatIsBackingOff) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::respond(503), HttpAction::respond(503)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.initial_backoff = 40ms;
  options.max_backoff = 80ms;
  WebhookSink sink(options);
  sink.write(sample_rule_event(0));
  sink.flush();
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(requests.back().succeeded());
}

TEST(WebhookSink, SlackPayloadCarriesTheTextLine) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script({HttpAction::respond(200), HttpAction::respond(404)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.slack_payload = true;
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    sink.write(sample_rule_event(0));
    sink.write(sample_rule_event(1));
    sink.flush();
  }
  ::testing::internal::GetCapturedStderr();

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (int step = 0; step < 2; ++step) {
    const boost::json::value body = boost::json::parse(requests[step].body);
    EXPECT_EQ(body, (boost::json::object{{"text", sample_rule_event(step).to_text()}}));
    EXPECT_EQ(requests[step].content_type, "application/json");
  }
  // The dead letter keeps the event itself, not the Slack message made of it.
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].at("event"), boost::json::parse(sample_rule_event(1).to_json()));
}

// Closing the sink against a dead endpoint costs max_attempts failures in all, not per event;
// every queued event still ends up in the dead letters.
TEST(WebhookSink, ShutdownAgainstADeadReceiverIsBoundedAndLosesNothing) {
  TempDir dir;
  HttpReceiver receiver(HttpAction::respond(503));
  const auto options = fast_webhook_options(receiver, dir.path());
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    write_steps(sink, 20);
  }
  ::testing::internal::GetCapturedStderr();

  // The first event may have used its attempts before shutdown began, then 3 more in all.
  EXPECT_LE(receiver.requests().size(), 2u * 3u);
  const auto dead = read_json_lines(options.dead_letter_path);
  ASSERT_EQ(dead.size(), 20u);
  for (std::size_t i = 0; i < dead.size(); ++i) {
    EXPECT_EQ(dead[i].at("event"),
              boost::json::parse(sample_rule_event(static_cast<int>(i)).to_json()));
  }
  const std::string last_error(dead.back().at("error").as_string());
  EXPECT_NE(last_error.find("given up at shutdown"), std::string::npos) << last_error;
  EXPECT_EQ(dead.back().at("attempts"), 0);
}

TEST(WebhookSink, RejectsOptionsItCannotWorkWith) {
  TempDir dir;
  HttpReceiver receiver;
  auto options = fast_webhook_options(receiver, dir.path());

  auto bad_attempts = options;
  bad_attempts.max_attempts = 0;
  EXPECT_THROW(WebhookSink{bad_attempts}, std::invalid_argument);

  auto bad_scheme = options;
  bad_scheme.url = "ftp://127.0.0.1/x";
  EXPECT_THROW(WebhookSink{bad_scheme}, std::invalid_argument);

  auto bad_backoff = options;
  bad_backoff.max_backoff = 1ms;
  bad_backoff.initial_backoff = 2ms;
  EXPECT_THROW(WebhookSink{bad_backoff}, std::invalid_argument);

  auto no_folder = options;
  no_folder.dead_letter_path = dir.path() / "missing" / "dead.jsonl";
  try {
    WebhookSink sink(no_folder);
    FAIL() << "expected StorageError";
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find(no_folder.dead_letter_path.string()),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(receiver.requests().empty());
}

}  // namespace
}  // namespace rulestream
