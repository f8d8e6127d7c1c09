#pragma once

#include <boost/json/object.hpp>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sinks/webhook_sink.hpp"
#include "tests/support/http_receiver.hpp"

namespace rulestream::testing {

// A Slack-style webhook path: the token in it must never be shown.
inline constexpr std::string_view kSecretWebhookPath = "/services/T000/B000/SECRETTOKEN";
inline constexpr std::string_view kSecretToken = "SECRETTOKEN";

// Options for a test against `receiver` at kSecretWebhookPath: short timeout and backoffs so
// retries take milliseconds, 3 attempts, dead letters in `dir`/dead-letters.jsonl.
WebhookSink::Options fast_webhook_options(const HttpReceiver& receiver,
                                          const std::filesystem::path& dir);

// Every line of a JSON-lines file, each parsed as an object (the test fails on anything else).
std::vector<boost::json::object> read_json_lines(const std::filesystem::path& path);

std::vector<std::string> bodies_of(const std::vector<ReceivedRequest>& requests);

}  // namespace rulestream::testing
