#pragma once

// A rule event as it travels through the Redis stream between the instance whose rules made it
// and the instance that delivers it to the sinks: every field, exactly (time in nanoseconds,
// figures as the shortest text that reads back to the same double, NaN and infinities
// included), so that a sink on another instance writes what a sink of the owner would have.
// RuleEvent::to_json is for people and rounds time to milliseconds; this is not for people.

#include <string>
#include <string_view>

#include "core/model/rule_event.hpp"

namespace rulestream {

std::string encode_rule_event(const RuleEvent& event);
// RedisError-free: std::invalid_argument naming the field when the text is not an encoded
// event (a foreign entry in the stream).
RuleEvent decode_rule_event(std::string_view text);

}  // namespace rulestream
