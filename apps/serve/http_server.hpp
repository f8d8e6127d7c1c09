#pragma once

// A small HTTP/1.1 server on Boost.Beast: keep-alive connections, requests answered by one
// handler, on a few threads of its own io_context (so a slow answer, a report page, does not
// hold up /healthz). A HEAD request gets its GET's headers and no body. What is not a request
// it can read gets a status saying why, and the connection closes: 400 (malformed), 414 (a
// target over 8 KiB), 431 (a header section over 64 KiB), 413 (a body over 64 KiB). At most
// `max_connections` are open at once; one more gets 503 and is closed. Requests the `slow`
// predicate names (a report page: it replays its job) are answered on a pool of their own, so
// that they never hold the threads that answer the probes.

#include <cstddef>
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
  struct Options {
    int threads = 4;  // answering requests (and reading and writing every connection)
    // Well under the descriptors a service is given (serve raises its soft limit: 1,024 is the
    // least a system grants), leaving the rest to the jobs it reads and the sinks it writes.
    std::size_t max_connections = 512;
    // Which requests are slow, and how many of them are answered at once (the rest wait).
    std::function<bool(const HttpRequest&)> slow;
    int slow_threads = 2;
  };

  // Binds HOST:PORT (PORT 0: an ephemeral port, see port()) and starts serving on `threads`
  // threads. std::runtime_error naming the address when it cannot listen.
  HttpServer(const std::string& host, std::uint16_t port, Handler handler, Options options);
  HttpServer(const std::string& host, std::uint16_t port, Handler handler)
      : HttpServer(host, port, std::move(handler), Options{}) {}
  ~HttpServer();  // stops accepting, closes connections, joins the threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rulestream
