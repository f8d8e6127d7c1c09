#include "tests/support/http_receiver.hpp"

#include <boost/algorithm/string/case_conv.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace rulestream::testing {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

}  // namespace

HttpAction HttpAction::respond(int status) {
  return {.kind = Kind::Respond, .status = status};
}

HttpAction HttpAction::too_many_requests(int retry_after_seconds) {
  return {.kind = Kind::Respond, .status = 429, .retry_after_seconds = retry_after_seconds};
}

HttpAction HttpAction::stall_for(std::chrono::milliseconds duration, int then_status) {
  return {.kind = Kind::Stall, .status = then_status, .stall = duration};
}

HttpAction HttpAction::close_connection() {
  return {.kind = Kind::Close, .status = 0};
}

HttpAction HttpAction::with_body(std::string text) const {
  HttpAction changed = *this;
  changed.body = std::move(text);
  return changed;
}

struct HttpReceiver::State {
  // First member, so it is destroyed last: destroying it destroys the sessions its pending
  // handlers still own, and their sockets and timers need it alive until then.
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::uint16_t port = 0;
  std::thread thread;

  mutable std::mutex mutex;
  mutable std::condition_variable arrived;
  std::deque<HttpAction> script;
  HttpAction otherwise;
  std::function<HttpAction(const ReceivedRequest&)> responder;
  std::vector<ReceivedRequest> requests;

  HttpAction record(ReceivedRequest request) {
    const std::lock_guard lock(mutex);
    if (responder) {
      request.action = responder(request);
    } else if (!script.empty()) {
      request.action = script.front();
      script.pop_front();
    } else {
      request.action = otherwise;
    }
    requests.push_back(request);
    arrived.notify_all();
    return request.action;
  }

  void accept() {
    acceptor.async_accept([this](boost::system::error_code error, tcp::socket socket) {
      if (error) return;  // the acceptor was closed
      start_session(std::move(socket));
      accept();
    });
  }

  void start_session(tcp::socket socket);
};

namespace {

// One connection: read a request, act, and read the next one while the client keeps the
// connection open.
class Session : public std::enable_shared_from_this<Session> {
 public:
  using Recorder = std::function<HttpAction(ReceivedRequest)>;

  Session(tcp::socket socket, Recorder recorder)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        recorder_(std::move(recorder)) {}

  void read_request() {
    request_ = {};
    http::async_read(socket_, buffer_, request_,
                     [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                       if (!error) self->act();
                     });
  }

 private:
  void act() {
    ReceivedRequest received;
    received.method = std::string(request_.method_string());
    received.target = std::string(request_.target());
    received.content_type = std::string(request_[http::field::content_type]);
    received.user_agent = std::string(request_[http::field::user_agent]);
    received.body = request_.body();
    for (const auto& field : request_) {
      received.headers[boost::algorithm::to_lower_copy(std::string(field.name_string()))] =
          std::string(field.value());
    }
    received.received_at = std::chrono::steady_clock::now();
    const HttpAction action = recorder_(std::move(received));
    switch (action.kind) {
      case HttpAction::Kind::Respond:
        respond(action);
        break;
      case HttpAction::Kind::Stall:
        timer_.expires_after(action.stall);
        timer_.async_wait([self = shared_from_this(), action](boost::system::error_code error) {
          if (!error) self->respond(action);
        });
        break;
      case HttpAction::Kind::Close: {
        boost::system::error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
        break;
      }
    }
  }

  void respond(const HttpAction& action) {
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(action.status));
    response_.set(http::field::content_type, "text/plain");
    if (action.retry_after_seconds) {
      response_.set(http::field::retry_after, std::to_string(*action.retry_after_seconds));
    }
    response_.body() = action.body.value_or(action.status / 100 == 2 ? "ok" : "receiver says no");
    response_.keep_alive(request_.keep_alive());
    response_.prepare_payload();
    http::async_write(socket_, response_,
                      [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                        if (error) return;
                        if (self->response_.keep_alive()) {
                          self->read_request();
                        } else {
                          boost::system::error_code ignored;
                          self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                        }
                      });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  boost::beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  Recorder recorder_;
};

}  // namespace

void HttpReceiver::State::start_session(tcp::socket socket) {
  std::make_shared<Session>(std::move(socket), [this](ReceivedRequest request) {
    return record(std::move(request));
  })->read_request();
}

HttpReceiver::HttpReceiver(HttpAction otherwise) : state_(std::make_unique<State>()) {
  state_->otherwise = otherwise;
  const tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  state_->port = state_->acceptor.local_endpoint().port();
  state_->accept();
  state_->thread = std::thread([state = state_.get()] { state->io.run(); });
}

HttpReceiver::~HttpReceiver() {
  state_->io.stop();
  state_->thread.join();
}

void HttpReceiver::script(std::vector<HttpAction> actions) {
  const std::lock_guard lock(state_->mutex);
  state_->script.insert(state_->script.end(), actions.begin(), actions.end());
}

void HttpReceiver::otherwise(HttpAction action) {
  const std::lock_guard lock(state_->mutex);
  state_->otherwise = action;
}

void HttpReceiver::answer_with(std::function<HttpAction(const ReceivedRequest&)> responder) {
  const std::lock_guard lock(state_->mutex);
  state_->responder = std::move(responder);
}

std::uint16_t HttpReceiver::port() const {
  return state_->port;
}

std::string HttpReceiver::url(std::string_view target) const {
  return "http://127.0.0.1:" + std::to_string(port()) + std::string(target);
}

std::vector<ReceivedRequest> HttpReceiver::requests() const {
  const std::lock_guard lock(state_->mutex);
  return state_->requests;
}

bool HttpReceiver::wait_for_requests(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(state_->mutex);
  return state_->arrived.wait_for(lock, timeout, [&] { return state_->requests.size() >= count; });
}

}  // namespace rulestream::testing
