#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream::testing {

// What HttpReceiver does with one request.
struct HttpAction {
  enum class Kind {
    Respond,  // answer `status` at once
    Stall,    // answer `status` only after `stall` (the client has usually given up by then)
    Close,    // close the connection without a word
  };
  Kind kind = Kind::Respond;
  int status = 200;
  std::optional<int> retry_after_seconds;  // sent as Retry-After when set
  std::chrono::milliseconds stall{0};
  std::optional<std::string> body;  // the response body; a short default when unset

  static HttpAction respond(int status = 200);
  static HttpAction too_many_requests(int retry_after_seconds);
  static HttpAction stall_for(std::chrono::milliseconds duration, int then_status = 200);
  static HttpAction close_connection();
  HttpAction with_body(std::string text) const;
};

struct ReceivedRequest {
  std::string method;
  std::string target;  // path and query, as sent
  std::string content_type;
  std::string user_agent;
  std::string body;
  std::map<std::string, std::string> headers;  // every header, by lower-case name
  HttpAction action;                           // what the receiver did with it
  std::chrono::steady_clock::time_point received_at;

  // Answered 2xx at once: the client certainly saw a success.
  bool succeeded() const {
    return action.kind == HttpAction::Kind::Respond && action.status / 100 == 2;
  }
};

// An HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for webhook tests, on its own thread.
// Requests take the scripted actions in order, then `otherwise`. Connections are kept alive,
// as curl expects. The destructor stops the server and joins its thread.
class HttpReceiver {
 public:
  explicit HttpReceiver(HttpAction otherwise = HttpAction::respond(200));
  ~HttpReceiver();
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  // Appends actions for the coming requests.
  void script(std::vector<HttpAction> actions);
  // Replaces the action for requests the script does not cover.
  void otherwise(HttpAction action);
  // From now on, every request gets what `responder` makes of it (a small service: routes,
  // header checks), instead of the script. It runs on the receiver's thread, one at a time.
  void answer_with(std::function<HttpAction(const ReceivedRequest&)> responder);

  std::uint16_t port() const;
  std::string url(std::string_view target = "/hook") const;

  std::vector<ReceivedRequest> requests() const;
  // True once `count` requests have arrived; false after `timeout`.
  bool wait_for_requests(std::size_t count, std::chrono::milliseconds timeout) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rulestream::testing
