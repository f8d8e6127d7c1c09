#include "apps/serve/http_server.hpp"

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace rulestream {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// A client that sends nothing for this long is let go: an idle keep-alive connection must not
// hold a socket for ever.
constexpr auto kIdleConnection = std::chrono::seconds(30);
// We answer GETs only: a large body is a client's mistake.
constexpr std::uint64_t kBodyLimit = 64 * 1024;
// The request line and headers may take this much; a target past kTargetLimit is refused with
// 414 (a target longer than the whole header section gets 431, as any header section that
// large does).
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::size_t kTargetLimit = 8 * 1024;

// What a request the parser refused gets: nothing for a client that went away, else a status
// that says why (RFC 9110, RFC 6585), and the connection closes.
std::optional<http::status> status_for_refused(const beast::error_code& error) {
  if (error.category() != beast::http::make_error_code(http::error::bad_target).category()) {
    return std::nullopt;  // closed, reset, timed out
  }
  switch (static_cast<http::error>(error.value())) {
    case http::error::end_of_stream:
    case http::error::partial_message:
    case http::error::short_read:
      return std::nullopt;
    case http::error::header_limit:
      return http::status::request_header_fields_too_large;
    case http::error::body_limit:
      return http::status::payload_too_large;
    default:
      return http::status::bad_request;
  }
}

// What sessions answer with: the handler, which requests are slow, and where those run.
struct Answering {
  HttpServer::Handler handler;
  std::function<bool(const HttpRequest&)> slow;
  asio::thread_pool& slow_pool;
};

// The handler's answer, or a 500 naming what it threw.
HttpResponse answer_of(const HttpServer::Handler& handler, const HttpRequest& request) {
  try {
    return handler(request);
  } catch (const std::exception& failure) {
    return {500, "text/plain; charset=utf-8", std::string(failure.what()) + "\n", {}};
  }
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `open_sessions` counts this session while it lives (HttpServer's connection cap).
  Session(tcp::socket socket, const Answering& answering, std::atomic<std::size_t>& open_sessions)
      : stream_(std::move(socket)), answering_(answering), open_sessions_(open_sessions) {
    open_sessions_.fetch_add(1);
  }
  ~Session() { open_sessions_.fetch_sub(1); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kBodyLimit);
    parser_->header_limit(kHeaderLimit);
    stream_.expires_after(kIdleConnection);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code error, std::size_t) {
                       self->on_read(error);
                     });
  }

  void on_read(beast::error_code error) {
    if (error) {
      if (const auto status = status_for_refused(error)) {
        answer({static_cast<unsigned>(*status),
                "text/plain; charset=utf-8",
                std::string(http::obsolete_reason(*status)) + ": " + error.message() + "\n",
                {}},
               11, false, false);
        return;
      }
      beast::error_code ignored;  // closed or timed out: nothing to answer
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    const auto& request = parser_->get();
    if (request.target().size() > kTargetLimit) {
      answer({414,
              "text/plain; charset=utf-8",
              "URI Too Long: the target is " + std::to_string(request.target().size()) +
                  " bytes, at most " + std::to_string(kTargetLimit) + " are read\n",
              {}},
             request.version(), false, false);
      return;
    }
    HttpRequest incoming;
    incoming.method = std::string(request.method_string());
    incoming.target = std::string(request.target());
    if (const auto found = request.find(http::field::authorization); found != request.end()) {
      incoming.authorization = std::string(found->value());
    }
    const unsigned version = request.version();
    const bool keep_alive = request.keep_alive();
    const bool head = request.method() == http::verb::head;
    if (answering_.slow && answering_.slow(incoming)) {
      // Made on the slow pool (a report page replays its job): the I/O threads stay free for
      // the probes and the API, and the answer is sent from this session's strand.
      asio::post(answering_.slow_pool, [self = shared_from_this(), incoming = std::move(incoming),
                                        version, keep_alive, head]() mutable {
        HttpResponse answered = answer_of(self->answering_.handler, incoming);
        asio::post(self->stream_.get_executor(),
                   [self, answered = std::move(answered), version, keep_alive, head]() mutable {
                     self->answer(std::move(answered), version, keep_alive, head);
                   });
      });
      return;
    }
    answer(answer_of(answering_.handler, incoming), version, keep_alive, head);
  }

  // Sends `answered`; reads the next request when `keep_alive`, else closes. A HEAD request's
  // answer says the length of the body GET would get, and sends none.
  void answer(HttpResponse answered, unsigned version, bool keep_alive, bool head) {
    if (head) {
      // No body, and the Content-Length GET's body would have.
      auto response = std::make_shared<http::response<http::empty_body>>(
          static_cast<http::status>(answered.status), version);
      response->content_length(answered.body.size());
      send(std::move(response), answered, keep_alive);
      return;
    }
    auto response = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(answered.status), version);
    response->body() = std::move(answered.body);
    response->prepare_payload();
    send(std::move(response), answered, keep_alive);
  }

  // Sets the headers `answered` names, sends `response`, then reads the next request or closes.
  template <typename Body>
  void send(std::shared_ptr<http::response<Body>> response, const HttpResponse& answered,
            bool keep_alive) {
    response->set(http::field::server, "rulestream");
    response->set(http::field::content_type, answered.content_type);
    for (const auto& [name, value] : answered.headers) response->set(name, value);
    response->keep_alive(keep_alive);
    http::async_write(
        stream_, *response,
        [self = shared_from_this(), response](beast::error_code write_error, std::size_t) {
          if (write_error) return;
          if (!response->keep_alive()) {
            beast::error_code ignored;
            self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
            return;
          }
          self->read();
        });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const Answering& answering_;
  std::atomic<std::size_t>& open_sessions_;
};

// What a connection past the cap gets before it is closed.
constexpr std::string_view kTooManyConnections =
    "HTTP/1.1 503 Service Unavailable\r\nServer: rulestream\r\nContent-Type: text/plain; "
    "charset=utf-8\r\nContent-Length: 21\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
    "too many connections\n";

}  // namespace

struct HttpServer::State {
  State(Handler handler, const Options& options)
      : slow_pool(static_cast<std::size_t>(std::max(1, options.slow_threads))),
        answering{std::move(handler), options.slow, slow_pool},
        max_connections(std::max<std::size_t>(options.max_connections, 1)),
        acceptor(io) {}

  void accept() {
    acceptor.async_accept(
        asio::make_strand(io), [this](beast::error_code error, tcp::socket socket) {
          if (error == asio::error::operation_aborted) return;
          if (!error) {
            if (open_sessions.load() >= max_connections) {
              refuse(std::move(socket));
            } else {
              std::make_shared<Session>(std::move(socket), answering, open_sessions)->start();
            }
          }
          accept();  // one failed accept (too many open files) must not end the server
        });
  }

  // Past the cap, idle clients would hold every descriptor the process has (the job scan's
  // and the sinks' too): a new connection is told so and closed.
  static void refuse(tcp::socket socket) {
    auto held = std::make_shared<tcp::socket>(std::move(socket));
    asio::async_write(*held, asio::buffer(kTooManyConnections),
                      [held](beast::error_code, std::size_t) {
                        beast::error_code ignored;
                        held->shutdown(tcp::socket::shutdown_both, ignored);
                        held->close(ignored);
                      });
  }

  asio::thread_pool slow_pool;
  const Answering answering;
  const std::size_t max_connections;
  std::atomic<std::size_t> open_sessions{0};
  asio::io_context io;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
};

HttpServer::HttpServer(const std::string& host, std::uint16_t port, Handler handler,
                       Options options)
    : state_(std::make_unique<State>(std::move(handler), options)) {
  const std::string where = host + ":" + std::to_string(port);
  try {
    const tcp::endpoint endpoint(asio::ip::make_address(host), port);
    state_->acceptor.open(endpoint.protocol());
    state_->acceptor.set_option(asio::socket_base::reuse_address(true));
    state_->acceptor.bind(endpoint);
    state_->acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::exception& error) {
    throw std::runtime_error("cannot listen on " + where + ": " + error.what());
  }
  state_->accept();
  for (int i = 0; i < std::max(1, options.threads); ++i) {
    state_->threads.emplace_back([state = state_.get()] {
      // Handlers catch what they expect; anything else (memory exhausted) ends this thread's
      // serving with one line rather than the process (nothing may leave a thread).
      try {
        state->io.run();
      } catch (const std::exception& error) {
        std::cerr << "rulestream serve: an HTTP thread stopped: " << error.what() << "\n";
      }
    });
  }
}

HttpServer::~HttpServer() {
  asio::post(state_->io, [state = state_.get()] {
    beast::error_code ignored;
    state->acceptor.close(ignored);
  });
  state_->io.stop();
  for (auto& thread : state_->threads) thread.join();
  // Slow answers still being made finish (their sessions post to a stopped io: nothing is
  // sent), then the pool's threads end.
  state_->slow_pool.join();
}

std::uint16_t HttpServer::port() const {
  return state_->acceptor.local_endpoint().port();
}

}  // namespace rulestream
