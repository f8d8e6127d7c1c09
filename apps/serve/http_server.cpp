#include "apps/serve/http_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <iostream>
#include <stdexcept>
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

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpServer::Handler& handler)
      : stream_(std::move(socket)), handler_(handler) {}

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kBodyLimit);
    stream_.expires_after(kIdleConnection);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code error, std::size_t) {
                       self->on_read(error);
                     });
  }

  void on_read(beast::error_code error) {
    if (error) {  // closed, timed out or not HTTP: nothing to answer
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    const auto& request = parser_->get();
    HttpRequest incoming;
    incoming.method = std::string(request.method_string());
    incoming.target = std::string(request.target());
    if (const auto found = request.find(http::field::authorization); found != request.end()) {
      incoming.authorization = std::string(found->value());
    }
    HttpResponse answer;
    try {
      answer = handler_(incoming);
    } catch (const std::exception& failure) {
      answer = {500, "text/plain; charset=utf-8", std::string(failure.what()) + "\n", {}};
    }
    auto response = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(answer.status), request.version());
    response->set(http::field::server, "rulestream");
    response->set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response->set(name, value);
    response->keep_alive(request.keep_alive());
    response->body() = std::move(answer.body);
    response->prepare_payload();
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
  const HttpServer::Handler& handler_;
};

}  // namespace

struct HttpServer::State {
  explicit State(Handler handler_in) : handler(std::move(handler_in)), acceptor(io) {}

  void accept() {
    acceptor.async_accept(
        asio::make_strand(io), [this](beast::error_code error, tcp::socket socket) {
          if (error == asio::error::operation_aborted) return;
          if (!error) std::make_shared<Session>(std::move(socket), handler)->start();
          accept();  // one failed accept (too many open files) must not end the server
        });
  }

  Handler handler;
  asio::io_context io;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
};

HttpServer::HttpServer(const std::string& host, std::uint16_t port, Handler handler, int threads)
    : state_(std::make_unique<State>(std::move(handler))) {
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
  for (int i = 0; i < std::max(1, threads); ++i) {
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
}

std::uint16_t HttpServer::port() const {
  return state_->acceptor.local_endpoint().port();
}

}  // namespace rulestream
