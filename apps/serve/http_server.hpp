#pragma once

// A small HTTP/1.1 server on Boost.Beast: keep-alive connections, GET answered by one
// handler, on a few threads of its own io_context (so a slow answer, a report page, does not
// hold up /healthz).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rulestream {

struct HttpRequest {
  std::string method;         // "GET"
  std::string target;         // path and query, as sent
  std::string authorization;  // the Authorization header, empty when absent
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

// The handler runs on any of the server's threads, several requests at once: it must be
// thread-safe. What it throws becomes a 500 naming the error. The server's own members are
// touched only by its constructor and destructor.
class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Binds HOST:PORT (PORT 0: an ephemeral port, see port()) and starts serving on `threads`
  // threads. std::runtime_error naming the address when it cannot listen.
  HttpServer(const std::string& host, std::uint16_t port, Handler handler, int threads = 4);
  ~HttpServer();  // stops accepting, closes connections, joins the threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rulestream
