#include "tests/support/webhook_test_support.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <fstream>

namespace rulestream::testing {

WebhookSink::Options fast_webhook_options(const HttpReceiver& receiver,
                                          const std::filesystem::path& dir) {
  using namespace std::chrono_literals;
  return {.url = receiver.url(kSecretWebhookPath),
          .timeout = 200ms,
          .max_attempts = 3,
          .initial_backoff = 5ms,
          .max_backoff = 40ms,
          .dead_letter_path = dir / "dead-letters.jsonl"};
}

std::vector<boost::json::object> read_json_lines(const std::filesystem::path& path) {
  std::vector<boost::json::object> objects;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    boost::system::error_code error;
    const boost::json::value value = boost::json::parse(line, error);
    if (error || !value.is_object()) {
      ADD_FAILURE() << path << ": not a JSON object: " << line;
      continue;
    }
    objects.push_back(value.as_object());
  }
  return objects;
}

std::vector<std::string> bodies_of(const std::vector<ReceivedRequest>& requests) {
  std::vector<std::string> bodies;
  for (const auto& request : requests) bodies.push_back(request.body);
  return bodies;
}

}  // namespace rulestream::testing
