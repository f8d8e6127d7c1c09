#include <gtest/gtest.h>

#include <stdexcept>

#include "sinks/webhook_sink.hpp"
#include "tests/support/http_receiver.hpp"
#include "tests/support/rule_event_samples.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/webhook_test_support.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using testing::fast_webhook_options;
using testing::HttpAction;
using testing::HttpReceiver;
using testing::kSecretToken;
using testing::kSecretWebhookPath;
using testing::read_text_file;
using testing::sample_rule_event;
using testing::TempDir;

void expect_no_secret(const std::string& text) {
  EXPECT_EQ(text.find(kSecretToken), std::string::npos) << text;
  EXPECT_EQ(text.find("T000"), std::string::npos) << text;
  EXPECT_EQ(text.find("services"), std::string::npos) << text;
}

TEST(WebhookRedaction, KeepsOnlySchemeHostAndPort) {
  EXPECT_EQ(WebhookSink::redact("https://hooks.slack.com/services/T000/B000/SECRETTOKEN"),
            "https://hooks.slack.com/…");
  EXPECT_EQ(WebhookSink::redact("http://127.0.0.1:8080/services/T000/B000/SECRETTOKEN"),
            "http://127.0.0.1:8080/…");
  EXPECT_EQ(WebhookSink::redact("HTTPS://example.com"), "https://example.com/…");
  EXPECT_EQ(WebhookSink::redact("https://example.com/hook?token=SECRETTOKEN#SECRETTOKEN"),
            "https://example.com/…");
  EXPECT_EQ(WebhookSink::redact("https://user:SECRETTOKEN@example.com/hook"),
            "https://example.com/…");
  EXPECT_EQ(WebhookSink::redact("http://[::1]:9000/SECRETTOKEN"), "http://[::1]:9000/…");
}

TEST(WebhookRedaction, ShowsNothingOfAnUnparseableUrl) {
  for (const std::string url : {"hooks.slack.com/services/SECRETTOKEN", "SECRETTOKEN",
                                "https://exa mple.com/SECRETTOKEN", ""}) {
    const std::string redacted = WebhookSink::redact(url);
    EXPECT_EQ(redacted.find(kSecretToken), std::string::npos) << url;
    EXPECT_EQ(redacted, "<unparseable URL>") << url;
  }
}

TEST(WebhookRedaction, DescribeShowsTheRedactedUrl) {
  TempDir dir;
  HttpReceiver receiver;
  const WebhookSink sink(fast_webhook_options(receiver, dir.path()));
  EXPECT_EQ(sink.describe(), "webhook http://127.0.0.1:" + std::to_string(receiver.port()) + "/…");
}

// The real URL is used (the receiver sees the whole path) but no log line, dead letter or
// error shows its token, even when the server quotes the path back in its answer.
TEST(WebhookRedaction, NoLogLineOrDeadLetterShowsTheToken) {
  TempDir dir;
  HttpReceiver receiver;
  receiver.script(
      {HttpAction::respond(404).with_body("Cannot POST " + std::string(kSecretWebhookPath)),
       HttpAction::respond(503), HttpAction::respond(503),
       HttpAction::respond(503).with_body("bad token " + std::string(kSecretToken)),
       HttpAction::stall_for(500ms), HttpAction::stall_for(500ms), HttpAction::stall_for(500ms)});
  auto options = fast_webhook_options(receiver, dir.path());
  options.timeout = 100ms;
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    for (int step = 0; step < 3; ++step) sink.write(sample_rule_event(step));
    sink.flush();
  }
  const std::string log = ::testing::internal::GetCapturedStderr();

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 7u);
  EXPECT_EQ(requests[0].target, kSecretWebhookPath);
  EXPECT_NE(log.find("HTTP 404: Cannot POST …"), std::string::npos) << log;
  EXPECT_NE(log.find("HTTP 503: bad token …"), std::string::npos) << log;
  EXPECT_NE(log.find("timeout"), std::string::npos) << log;
  expect_no_secret(log);
  expect_no_secret(read_text_file(options.dead_letter_path));
}

TEST(WebhookRedaction, ConnectionErrorsDoNotShowTheToken) {
  TempDir dir;
  std::string url;
  {
    HttpReceiver gone;
    url = gone.url(kSecretWebhookPath);
  }
  WebhookSink::Options options{.url = url,
                               .timeout = 200ms,
                               .max_attempts = 1,
                               .dead_letter_path = dir.path() / "dead.jsonl"};
  ::testing::internal::CaptureStderr();
  {
    WebhookSink sink(options);
    sink.write(sample_rule_event(0));
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("dead-lettered"), std::string::npos) << log;
  expect_no_secret(log);
  expect_no_secret(read_text_file(options.dead_letter_path));
}

TEST(WebhookRedaction, ConstructionErrorsDoNotShowTheToken) {
  TempDir dir;
  const auto error_of = [&](WebhookSink::Options options) -> std::string {
    try {
      WebhookSink sink(std::move(options));
    } catch (const std::exception& error) {
      return error.what();
    }
    ADD_FAILURE() << "expected the sink to refuse its options";
    return {};
  };
  WebhookSink::Options options{.url = "ftp://127.0.0.1/services/T000/B000/SECRETTOKEN",
                               .dead_letter_path = dir.path() / "dead.jsonl"};
  std::string message = error_of(options);
  EXPECT_NE(message.find("ftp://127.0.0.1/…"), std::string::npos) << message;
  expect_no_secret(message);

  options.url = "http://127.0.0.1:1/services/T000/B000/SECRETTOKEN";
  options.max_attempts = 0;
  message = error_of(options);
  EXPECT_NE(message.find("max_attempts"), std::string::npos) << message;
  expect_no_secret(message);

  options.url = "not a url /services/T000/B000/SECRETTOKEN";
  options.max_attempts = 1;
  expect_no_secret(error_of(options));
}

}  // namespace
}  // namespace rulestream
