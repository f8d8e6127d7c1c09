#include "apps/coordination/rule_event_codec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rulestream {
namespace {

RuleEvent condition_met() {
  RuleEvent event;
  event.kind = RuleEvent::Kind::ConditionMet;
  // A time with nanoseconds: to_json keeps milliseconds, the stream must keep every digit.
  event.time = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(1'764'158'400'123'456'789)));
  event.trial = "job-7";
  event.rule_configuration = "VG";
  event.rule = "VanishingGradient";
  event.global_step = 41;
  event.mode = Mode::Eval;
  event.mode_step = 3;
  event.tensors = {"gradient/fc1.weight", "gradient/\"quoted\"\n"};
  // 0.1 + 0.2 has no short decimal form shorter than 17 digits; the subnormal and the
  // non-finite values are where text formats usually lose a value.
  event.figures = {{"abs_mean", 0.1 + 0.2, std::string("gradient/fc1.weight")},
                   {"threshold", 1e-7, std::nullopt},
                   {"tiny", std::numeric_limits<double>::denorm_min(), std::nullopt},
                   {"up", std::numeric_limits<double>::infinity(), std::nullopt},
                   {"down", -std::numeric_limits<double>::infinity(), std::nullopt}};
  event.message = "gradient/fc1.weight abs mean 3e-09 < threshold 1e-07";
  return event;
}

TEST(RuleEventCodec, AConditionMetComesBackExactly) {
  const RuleEvent event = condition_met();
  const RuleEvent back = decode_rule_event(encode_rule_event(event));
  EXPECT_EQ(back.kind, event.kind);
  EXPECT_EQ(back.time, event.time);
  EXPECT_EQ(back.trial, event.trial);
  EXPECT_EQ(back.rule_configuration, event.rule_configuration);
  EXPECT_EQ(back.rule, event.rule);
  EXPECT_EQ(back.global_step, 41);
  EXPECT_EQ(back.mode, Mode::Eval);
  EXPECT_EQ(back.mode_step, 3);
  EXPECT_EQ(back.tensors, event.tensors);
  EXPECT_EQ(back.figures, event.figures);  // bit for bit: operator== on doubles
  EXPECT_EQ(back.message, event.message);
  EXPECT_FALSE(back.status);
  // What a sink writes of it is the same line.
  EXPECT_EQ(back.to_json(), event.to_json());
}

TEST(RuleEventCodec, AnIncidentAndItsResolutionComeBackExactly) {
  RuleEvent firing = condition_met();
  firing.incident = IncidentNote{.id = "VG/gradient/fc1.weight#2",
                                 .state = IncidentNote::State::Updated,
                                 .firings = 7,
                                 .opened_step = 30,
                                 .last_step = 41,
                                 .worst = Figure{"abs_mean", 0.1 + 0.2, std::nullopt},
                                 .worst_step = 38};
  const RuleEvent back = decode_rule_event(encode_rule_event(firing));
  EXPECT_EQ(back.incident, firing.incident);
  EXPECT_EQ(back.to_json(), firing.to_json());

  RuleEvent resolved = firing;
  resolved.kind = RuleEvent::Kind::IncidentResolved;
  resolved.incident->state = IncidentNote::State::Resolved;
  resolved.incident->worst.reset();
  const RuleEvent resolved_back = decode_rule_event(encode_rule_event(resolved));
  EXPECT_EQ(resolved_back.kind, RuleEvent::Kind::IncidentResolved);
  EXPECT_EQ(resolved_back.incident, resolved.incident);
  EXPECT_EQ(resolved_back.to_json(), resolved.to_json());
}

TEST(RuleEventCodec, NanSurvives) {
  RuleEvent event = condition_met();
  event.figures = {{"loss", std::numeric_limits<double>::quiet_NaN(), std::nullopt}};
  const RuleEvent back = decode_rule_event(encode_rule_event(event));
  ASSERT_EQ(back.figures.size(), 1u);
  EXPECT_TRUE(std::isnan(back.figures[0].value));
}

TEST(RuleEventCodec, AStatusComesBackExactly) {
  RuleEvent event;
  event.kind = RuleEvent::Kind::Status;
  event.trial = "job-7";
  event.rule_configuration = "NonFinite";
  event.rule = "NonFinite";
  event.status = RuleStatus::IssuesFound;
  event.steps_evaluated = 200;
  event.times_fired = 2;
  event.message = "";
  const RuleEvent back = decode_rule_event(encode_rule_event(event));
  EXPECT_EQ(back.kind, RuleEvent::Kind::Status);
  EXPECT_EQ(back.status, RuleStatus::IssuesFound);
  EXPECT_EQ(back.steps_evaluated, 200);
  EXPECT_EQ(back.times_fired, 2);
  EXPECT_EQ(back.to_json(), event.to_json());
}

TEST(RuleEventCodec, WhatIsNotAnEncodedEventIsRefusedNamingTheField) {
  const auto error_of = [](std::string_view text) -> std::string {
    try {
      decode_rule_event(text);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "(accepted)";
  };
  EXPECT_NE(error_of("not json").find("not a JSON object"), std::string::npos);
  std::string encoded = encode_rule_event(condition_met());
  std::string no_trial = encoded;
  no_trial.replace(no_trial.find("\"trial\""), 7, "\"trail\"");
  EXPECT_NE(error_of(no_trial).find("no 'trial'"), std::string::npos);
  std::string bad_kind = encoded;
  bad_kind.replace(bad_kind.find("condition_met"), 13, "condition_xxx");
  EXPECT_NE(error_of(bad_kind).find("kind is 'condition_xxx'"), std::string::npos);
}

}  // namespace
}  // namespace rulestream
