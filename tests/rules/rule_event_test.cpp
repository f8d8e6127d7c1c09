#include "core/model/rule_event.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <limits>
#include <set>

namespace rulestream {
namespace {

namespace json = boost::json;
using namespace std::chrono;

system_clock::time_point noon_and_123_ms() {
  return sys_days{year{2026} / 11 / 22} + hours{12} + milliseconds{123};
}

RuleEvent vanishing_event() {
  RuleEvent event;
  event.kind = RuleEvent::Kind::ConditionMet;
  event.time = noon_and_123_ms();
  event.trial = "job";
  event.rule_configuration = "VG";
  event.rule = "VanishingGradient";
  event.global_step = 30;
  event.mode = Mode::Train;
  event.mode_step = 30;
  event.tensors = {"gradient/fc1.weight"};
  event.figures = {{"abs_mean", 3.2e-10, "gradient/fc1.weight"}, {"threshold", 1e-7, {}}};
  event.message = "gradient/fc1.weight abs mean 3.2e-10 < threshold 1e-07";
  return event;
}

RuleEvent status_event(RuleStatus status) {
  RuleEvent event;
  event.kind = RuleEvent::Kind::Status;
  event.time = noon_and_123_ms();
  event.trial = "job";
  event.rule_configuration = "VG";
  event.rule = "VanishingGradient";
  event.status = status;
  event.steps_evaluated = 200;
  event.times_fired = 3;
  return event;
}

std::set<std::string> keys(const json::object& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object) out.emplace(key);
  return out;
}

TEST(RuleEventTest, ConditionMetAsJson) {
  const std::string text = vanishing_event().to_json();
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one event, one line";
  const json::object event = json::parse(text).as_object();
  EXPECT_EQ(keys(event), (std::set<std::string>{"time", "kind", "trial", "rule_configuration",
                                                "rule", "global_step", "mode", "mode_step",
                                                "tensors", "figures", "message"}));
  EXPECT_EQ(event.at("time"), "2026-11-22T12:00:00.123Z");
  EXPECT_EQ(event.at("kind"), "condition_met");
  EXPECT_EQ(event.at("trial"), "job");
  EXPECT_EQ(event.at("rule_configuration"), "VG");
  EXPECT_EQ(event.at("rule"), "VanishingGradient");
  EXPECT_EQ(event.at("global_step"), 30);
  EXPECT_EQ(event.at("mode"), "TRAIN");
  EXPECT_EQ(event.at("mode_step"), 30);
  EXPECT_EQ(event.at("tensors"), json::array({"gradient/fc1.weight"}));
  const json::array& figures = event.at("figures").as_array();
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_EQ(keys(figures[0].as_object()), (std::set<std::string>{"name", "value", "tensor"}));
  EXPECT_EQ(figures[0].at("name"), "abs_mean");
  EXPECT_EQ(figures[0].at("value").as_double(), 3.2e-10);
  EXPECT_EQ(figures[0].at("tensor"), "gradient/fc1.weight");
  EXPECT_EQ(keys(figures[1].as_object()), (std::set<std::string>{"name", "value"}));
  EXPECT_EQ(figures[1].at("value").as_double(), 1e-7);
  EXPECT_EQ(event.at("message"), "gradient/fc1.weight abs mean 3.2e-10 < threshold 1e-07");
  // Numbers as Python prints them, which people reading smdebug output expect.
  EXPECT_NE(text.find("\"value\": 1e-07"), std::string::npos) << text;
}

TEST(RuleEventTest, NonFiniteFiguresAreStrings) {
  RuleEvent event = vanishing_event();
  event.figures = {{"a", std::numeric_limits<double>::quiet_NaN(), "t"},
                   {"b", std::numeric_limits<double>::infinity(), {}},
                   {"c", -std::numeric_limits<double>::infinity(), {}},
                   {"d", 0.0, {}}};
  const json::array figures = json::parse(event.to_json()).at("figures").as_array();
  EXPECT_EQ(figures[0].at("value"), "NaN");
  EXPECT_EQ(figures[1].at("value"), "Infinity");
  EXPECT_EQ(figures[2].at("value"), "-Infinity");
  EXPECT_EQ(figures[3].at("value").as_double(), 0.0);
}

TEST(RuleEventTest, StatusAsJson) {
  const json::object event =
      json::parse(status_event(RuleStatus::IssuesFound).to_json()).as_object();
  EXPECT_EQ(keys(event),
            (std::set<std::string>{"time", "kind", "trial", "rule_configuration", "rule", "status",
                                   "incidents", "steps_evaluated", "times_fired", "message"}));
  EXPECT_EQ(event.at("kind"), "status");
  EXPECT_EQ(event.at("status"), "IssuesFound");
  EXPECT_EQ(event.at("steps_evaluated"), 200);
  EXPECT_EQ(event.at("times_fired"), 3);
  EXPECT_EQ(event.at("message"), "");
}

TEST(RuleEventTest, StatusNames) {
  EXPECT_EQ(rule_status_name(RuleStatus::NoIssuesFound), "NoIssuesFound");
  EXPECT_EQ(rule_status_name(RuleStatus::IssuesFound), "IssuesFound");
  EXPECT_EQ(rule_status_name(RuleStatus::Error), "Error");
}

TEST(RuleEventTest, ConditionMetAsText) {
  EXPECT_EQ(vanishing_event().to_text(),
            "2026-11-22T12:00:00.123Z VG (VanishingGradient) fired at step 30 (TRAIN 30) on job: "
            "gradient/fc1.weight abs mean 3.2e-10 < threshold 1e-07");
}

TEST(RuleEventTest, StatusAsText) {
  EXPECT_EQ(status_event(RuleStatus::IssuesFound).to_text(),
            "2026-11-22T12:00:00.123Z VG (VanishingGradient) on job: IssuesFound (fired 3 times "
            "in 200 steps evaluated)");
  RuleEvent error = status_event(RuleStatus::Error);
  error.times_fired = 1;
  error.steps_evaluated = 1;
  error.message = "job.json: bad CRC\nat offset 12";
  EXPECT_EQ(error.to_text(),
            "2026-11-22T12:00:00.123Z VG (VanishingGradient) on job: Error (fired 1 time in 1 "
            "step evaluated): job.json: bad CRC at offset 12");
  EXPECT_EQ(json::parse(error.to_json()).at("message"), "job.json: bad CRC\nat offset 12");
}

TEST(RuleEventTest, UnnamedConfigurationUsesTheRuleName) {
  RuleEvent event = vanishing_event();
  event.rule_configuration.clear();
  EXPECT_EQ(json::parse(event.to_json()).at("rule_configuration"), "VanishingGradient");
  EXPECT_EQ(event.to_text().rfind("2026-11-22T12:00:00.123Z VanishingGradient fired at step 30", 0),
            0u);
  event.rule_configuration = "VanishingGradient";
  EXPECT_EQ(event.to_text().rfind("2026-11-22T12:00:00.123Z VanishingGradient fired at step 30", 0),
            0u);
}

TEST(RuleEventTest, TimeIsUtcWithMillisecondsTruncated) {
  RuleEvent event = vanishing_event();
  event.time = sys_days{year{1999} / 12 / 31} + hours{23} + minutes{59} + seconds{59} +
               microseconds{999'999};
  EXPECT_EQ(json::parse(event.to_json()).at("time"), "1999-12-31T23:59:59.999Z");
  event.time = sys_days{year{2024} / 2 / 29};
  EXPECT_EQ(json::parse(event.to_json()).at("time"), "2024-02-29T00:00:00.000Z");
}

TEST(RuleEventTest, GlobalModeAndEscapedStrings) {
  RuleEvent event = vanishing_event();
  event.mode = Mode::Global;
  event.mode_step = 30;
  event.trial = "job \"quoted\"";
  event.tensors = {"ü/tensor"};
  const json::object parsed = json::parse(event.to_json()).as_object();
  EXPECT_EQ(parsed.at("mode"), "GLOBAL");
  EXPECT_EQ(parsed.at("trial"), "job \"quoted\"");
  EXPECT_EQ(parsed.at("tensors"), json::array({"ü/tensor"}));
  EXPECT_NE(event.to_text().find("(GLOBAL 30) on job \"quoted\""), std::string::npos);
}

}  // namespace
}  // namespace rulestream
