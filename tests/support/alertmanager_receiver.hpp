#pragma once

// An Alertmanager stand-in for the Alertmanager sink's tests: POST /api/v2/alerts on
// 127.0.0.1, each payload checked against what Alertmanager's API v2 accepts (the
// postableAlerts schema of its OpenAPI spec, and the checks Alertmanager makes of each alert),
// answered 200 when it passes and 400 with the reason when not, as Alertmanager does.

#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/http_receiver.hpp"

namespace rulestream::testing {

struct ReceivedAlert {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string starts_at_text, ends_at_text;  // as sent ("" when absent)
  std::chrono::system_clock::time_point starts_at, ends_at;
  std::string generator_url;
};

// One POST that passed the checks and was answered 200.
struct AlertPost {
  std::vector<ReceivedAlert> alerts;
  std::chrono::system_clock::time_point received_at;
  std::string authorization;  // the Authorization header, if any
};

// Checks a body as Alertmanager's API v2 would, and reads its alerts into `alerts`. Returns
// "" or what it refuses:
//   - a JSON array of objects, with no member postableAlert does not define (labels,
//     annotations, startsAt, endsAt, generatorURL);
//   - labels required, a non-empty object of strings, names [a-zA-Z_][a-zA-Z0-9_]*; stricter
//     than Alertmanager, no empty value and alertname among them (what it groups and routes
//     by: an alert without one is of no use);
//   - annotations, if any, an object of strings;
//   - startsAt and endsAt, if any, RFC 3339 date-times; endsAt not before startsAt;
//   - generatorURL, if any, an absolute URI (strfmt "uri").
std::string check_postable_alerts(const boost::json::value& body,
                                  std::vector<ReceivedAlert>& alerts);

// RFC 3339 date-time ("2026-11-26T13:00:00.123Z", "...+02:00") as a time point; false when it
// is not one.
bool parse_rfc3339(const std::string& text, std::chrono::system_clock::time_point& time);

// Thread-safe; answers on its HttpReceiver's thread.
class AlertmanagerReceiver {
 public:
  AlertmanagerReceiver();

  // The next requests are answered with these statuses (503, 500...) before anything else.
  void fail_next(std::vector<int> statuses);
  // "http://127.0.0.1:PORT" (what the sink is given), with `userinfo@` when asked.
  std::string url(const std::string& userinfo = {}) const;
  std::uint16_t port() const { return http_.port(); }

  // Every POST accepted, in order of arrival.
  std::vector<AlertPost> posts() const;
  // Every request refused for its shape (a failure of the sink, not a scripted one).
  std::vector<std::string> problems() const;
  // Every request, accepted, refused or failed as scripted.
  std::vector<ReceivedRequest> requests() const { return http_.requests(); }
  // True once `count` POSTs were accepted; false after `timeout`.
  bool wait_for_posts(std::size_t count, std::chrono::milliseconds timeout) const;

 private:
  HttpAction answer(const ReceivedRequest& request);

  HttpReceiver http_;
  mutable std::mutex mutex_;
  std::vector<int> failures_;  // still to answer, first first
  std::vector<AlertPost> posts_;
  std::vector<std::string> problems_;
};

}  // namespace rulestream::testing
