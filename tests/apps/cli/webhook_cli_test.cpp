// The webhook sink as the CLI and the rules file build it (issue 22, item 11): events POSTed as
// JSON (Slack's payload with slack:), and a receiver that never answers leaves them in the
// dead-letter file the rules file names, the run reporting it rather than losing them. And the
// Alertmanager sink as --sink and the rules file build it (issue 24).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "apps/cli/cli.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "tests/support/alertmanager_receiver.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/http_receiver.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using testing::HttpAction;
using testing::HttpReceiver;
using testing::TempDir;

// A logdir whose loss turns NaN at step 3: NonFinite fires once, then reports its status.
std::string write_logdir(const std::filesystem::path& root) {
  TensorBoardWriter writer(root / "logs" / "events.out.tfevents.1.host");
  for (int step = 0; step < 5; ++step) {
    writer.add_scalar("train/loss", step, step == 3 ? std::nanf("") : 1.0F, step);
  }
  return (root / "logs").string();
}

TEST(WebhookCli, TheSinkArgumentPostsEachEventAsJson) {
  TempDir dir;
  const std::string logdir = write_logdir(dir.path());
  HttpReceiver receiver;
  const auto outcome = testing::run_cli(
      "replay", {logdir, "--rule", "NonFinite", "--sink", "webhook:" + receiver.url()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3U);  // the event, its incident resolved at the end, the status
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].content_type, "application/json");
  const auto event = boost::json::parse(requests[0].body).as_object();
  EXPECT_EQ(event.at("rule"), "NonFinite");
  EXPECT_EQ(event.at("global_step"), 3);
  EXPECT_EQ(boost::json::parse(requests[1].body).at("kind"), "incident_resolved");
  EXPECT_EQ(boost::json::parse(requests[2].body).at("status"), "IssuesFound");
  EXPECT_TRUE(outcome.out.empty()) << "a configured sink replaces stdout";
}

TEST(WebhookCli, SlackGetsItsTextPayload) {
  TempDir dir;
  const std::string logdir = write_logdir(dir.path());
  HttpReceiver receiver;
  const auto outcome = testing::run_cli(
      "replay", {logdir, "--rule", "NonFinite", "--sink", "slack:" + receiver.url()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  ASSERT_GE(receiver.requests().size(), 1U);
  const auto payload = boost::json::parse(receiver.requests()[0].body).as_object();
  ASSERT_TRUE(payload.contains("text"));
  EXPECT_THAT(std::string(payload.at("text").as_string()), HasSubstr("NonFinite fired at step 3"));
}

// A loss at 1.0 for 30 steps, then up by half at every step to step 79 (1.5^50 = 6e8): the
// default set's Divergence fires at step 32 (the last three values 1.5, 2.25, 3.375 have median
// 2.25 > 2 x the best level 1.0) and again at each tenfold worsening, all one incident.
std::string write_diverging_logdir(const std::filesystem::path& root) {
  TensorBoardWriter writer(root / "logs" / "events.out.tfevents.1.host");
  double loss = 1.0;
  for (int step = 0; step < 80; ++step) {
    if (step >= 30) loss *= 1.5;
    writer.add_scalar("train/loss", step, static_cast<float>(loss), step);
  }
  return (root / "logs").string();
}

TEST(WebhookCli, ADivergingRunIsOneMessageWhenItOpensAndOneWhenItResolves) {
  TempDir dir;
  const std::string logdir = write_diverging_logdir(dir.path());
  HttpReceiver webhook;
  HttpReceiver slack;
  const auto outcome =
      testing::run_cli("replay", {logdir, "--sink", "webhook:" + webhook.url(), "--sink",
                                  "slack:" + slack.url(), "--sink", "stdout:json"});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;

  // The JSON stream keeps every firing, each naming its incident.
  std::vector<std::string> firings;
  std::istringstream lines(outcome.out);
  for (std::string line; std::getline(lines, line);) {
    const auto event = boost::json::parse(line).as_object();
    if (event.at("kind") != "condition_met") continue;
    EXPECT_EQ(event.at("incident").at("id"), "Divergence/train/loss#1") << line;
    firings.push_back(std::string(event.at("incident").at("state").as_string()));
  }
  ASSERT_GE(firings.size(), 3U) << outcome.out;  // 3.4 at step 32, then every 10x: 34, 340, ...
  EXPECT_EQ(firings.front(), "opened");
  EXPECT_EQ(firings.back(), "updated");

  // The webhook: one firing (the opening), one resolution, and the six rules' statuses.
  std::map<std::string, int> kinds;
  for (const auto& request : webhook.requests()) {
    const auto event = boost::json::parse(request.body).as_object();
    ++kinds[std::string(event.at("kind").as_string())];
    if (event.at("kind") == "condition_met") {
      EXPECT_EQ(event.at("global_step"), 32);
    }
    if (event.at("kind") == "incident_resolved") {
      EXPECT_EQ(event.at("incident").at("firings").as_int64(),
                static_cast<std::int64_t>(firings.size()));
    }
  }
  EXPECT_EQ(kinds, (std::map<std::string, int>{
                       {"condition_met", 1}, {"incident_resolved", 1}, {"status", 6}}));

  // Slack: the same two messages about the incident, as text.
  std::vector<std::string> incident_texts;
  for (const auto& request : slack.requests()) {
    const std::string text(boost::json::parse(request.body).at("text").as_string());
    if (text.find("incident Divergence/") != std::string::npos) incident_texts.push_back(text);
  }
  ASSERT_EQ(incident_texts.size(), 2U);
  EXPECT_THAT(incident_texts[0], HasSubstr("Divergence fired at step 32"));
  EXPECT_THAT(incident_texts[0], HasSubstr("incident Divergence/train/loss#1 opened"));
  EXPECT_THAT(incident_texts[1], HasSubstr("incident Divergence/train/loss#1 resolved"));
  EXPECT_THAT(incident_texts[1], HasSubstr("worst value"));
}

TEST(WebhookCli, ARulesFileWebhookThatNeverAnswersFillsItsDeadLetterFile) {
  TempDir dir;
  const std::string logdir = write_logdir(dir.path());
  HttpReceiver receiver(HttpAction::respond(503));
  const auto dead_letters = dir.path() / "dead.jsonl";
  const auto rules = dir.path() / "rules.json";
  testing::write_text_file(
      rules, R"({"rules": [{"RuleParameters": {"rule_to_invoke": "NonFinite"}}],
                 "sinks": [{"type": "webhook", "url": ")" +
                 receiver.url() + R"(", "dead_letter_path": ")" + dead_letters.string() +
                 R"("}]})");
  const auto outcome = testing::run_cli("replay", {logdir, "--rules", rules.string()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  // Retried (5 attempts each, the default), then kept: the firing, its incident's resolution
  // and the status, one JSON object a line.
  EXPECT_EQ(receiver.requests().size(), 15U);
  const std::string kept = testing::read_text_file(dead_letters);
  EXPECT_EQ(std::count(kept.begin(), kept.end(), '\n'), 3);
  EXPECT_THAT(kept, HasSubstr("\"rule\": \"NonFinite\""));
  EXPECT_THAT(kept, HasSubstr("\"status\": \"IssuesFound\""));
}

TEST(AlertmanagerCli, TheSinkArgumentRaisesTheAlertAndResolvesItAtTheEnd) {
  TempDir dir;
  const std::string logdir = write_logdir(dir.path());
  testing::AlertmanagerReceiver alertmanager;
  const auto outcome = testing::run_cli(
      "replay", {logdir, "--rule", "NonFinite", "--sink", "alertmanager:" + alertmanager.url()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  EXPECT_TRUE(alertmanager.problems().empty()) << alertmanager.problems().front();
  const auto posts = alertmanager.posts();
  ASSERT_EQ(posts.size(), 2U);  // NonFinite fires at step 3, then the replay ends
  ASSERT_EQ(posts[0].alerts.size(), 1U);
  ASSERT_EQ(posts[1].alerts.size(), 1U);
  const testing::ReceivedAlert& fired = posts[0].alerts[0];
  EXPECT_EQ(fired.labels.at("alertname"), "NonFinite");
  EXPECT_EQ(fired.labels.at("training_job"), logdir);  // a TensorBoard trial is named by its path
  EXPECT_EQ(fired.labels.at("severity"), "warning");
  EXPECT_EQ(fired.annotations.at("step"), "3");
  EXPECT_GT(fired.ends_at, posts[0].received_at);
  // One alert per incident: its id and series among the labels.
  EXPECT_EQ(fired.labels.at("incident"), "NonFinite/train/loss#1");
  EXPECT_EQ(fired.labels.at("series"), "train/loss");
  const testing::ReceivedAlert& resolved = posts[1].alerts[0];
  EXPECT_EQ(resolved.labels, fired.labels);
  EXPECT_LE(resolved.ends_at, posts[1].received_at);
  EXPECT_THAT(resolved.annotations.at("resolution"), HasSubstr("open when the job ended"));
}

TEST(AlertmanagerCli, ARulesFileAlertmanagerWithBadSettingsIsRefusedNamingThem) {
  TempDir dir;
  const std::string logdir = write_logdir(dir.path());
  const auto run_with_sink = [&](const std::string& sink) {
    const auto rules = dir.path() / "rules.json";
    testing::write_text_file(
        rules, R"({"rules": [{"RuleParameters": {"rule_to_invoke": "NonFinite"}}], "sinks": [)" +
                   sink + "]}");
    return testing::run_cli("replay", {logdir, "--rules", rules.string()});
  };
  const auto zero = run_with_sink(
      R"({"type": "alertmanager", "url": "http://127.0.0.1:9/", "resend_interval": 0})");
  EXPECT_EQ(zero.exit_code, cli::kExitError);
  EXPECT_THAT(zero.err, HasSubstr("resend_interval must be a number of seconds"));
  const auto no_token = run_with_sink(
      R"({"type": "alertmanager", "url": "http://user:hunter2@127.0.0.1:9/",
          "bearer_token_file": ")" +
      (dir.path() / "missing-token").string() + R"("})");
  EXPECT_EQ(no_token.exit_code, cli::kExitError);
  EXPECT_THAT(no_token.err, HasSubstr("cannot read the bearer token file"));
  EXPECT_THAT(no_token.err, HasSubstr("missing-token"));
  EXPECT_THAT(no_token.err, ::testing::Not(HasSubstr("hunter2")));
  const auto typo =
      run_with_sink(R"({"type": "alertmanager", "url": "http://a/", "severty": "x"})");
  EXPECT_EQ(typo.exit_code, cli::kExitError);
  EXPECT_THAT(typo.err, HasSubstr("unknown key 'severty' in an alertmanager sink"));
}

}  // namespace
}  // namespace rulestream
