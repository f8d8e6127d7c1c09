#include "tests/support/tcp_proxy.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <charconv>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace rulestream::testing {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Reads the HTTP requests out of what a client sends on one connection.
class RequestParser {
 public:
  // Feeds the next bytes; calls `found` for each request head completed. False once the
  // stream makes no sense as HTTP/1.1 (nothing more is recorded on it).
  template <typename Found>
  bool feed(std::string_view bytes, Found&& found) {
    while (!broken_ && !bytes.empty()) {
      if (body_left_ > 0) {
        const auto skip = std::min<std::uint64_t>(body_left_, bytes.size());
        body_left_ -= skip;
        bytes.remove_prefix(static_cast<std::size_t>(skip));
        continue;
      }
      const std::size_t searched_from = head_.size() < 3 ? 0 : head_.size() - 3;
      head_.append(bytes);
      bytes = {};
      const std::size_t end = head_.find("\r\n\r\n", searched_from);
      if (end == std::string::npos) continue;
      const std::string rest = head_.substr(end + 4);
      head_.resize(end);
      parse_head(found);
      head_.clear();
      // The rest is this request's body, then the next request.
      std::string_view remaining(rest);
      const auto skip = std::min<std::uint64_t>(body_left_, remaining.size());
      body_left_ -= skip;
      remaining.remove_prefix(static_cast<std::size_t>(skip));
      if (!remaining.empty()) feed(remaining, found);
    }
    return !broken_;
  }

 private:
  template <typename Found>
  void parse_head(Found&& found) {
    std::string_view head(head_);
    const std::size_t line_end = std::min(head.find("\r\n"), head.size());
    const std::string_view line = head.substr(0, line_end);
    const std::size_t first_space = line.find(' ');
    const std::size_t second_space = line.find(' ', first_space + 1);
    if (first_space == std::string_view::npos || second_space == std::string_view::npos) {
      broken_ = true;
      return;
    }
    ProxiedRequest request;
    request.method = std::string(line.substr(0, first_space));
    request.target = std::string(line.substr(first_space + 1, second_space - first_space - 1));
    std::string_view fields = line_end < head.size() ? head.substr(line_end + 2) : "";
    while (!fields.empty()) {
      const std::size_t next = std::min(fields.find("\r\n"), fields.size());
      const std::string_view field = fields.substr(0, next);
      fields.remove_prefix(std::min(next + 2, fields.size()));
      const std::size_t colon = field.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view name = field.substr(0, colon);
      const std::string_view value = trimmed(field.substr(colon + 1));
      if (same_name(name, "Range")) request.range = std::string(value);
      if (same_name(name, "Content-Length")) {
        const auto parsed = std::from_chars(value.data(), value.data() + value.size(), body_left_);
        if (parsed.ec != std::errc()) broken_ = true;
      }
      if (same_name(name, "Transfer-Encoding")) broken_ = true;  // chunked bodies: not followed
    }
    found(std::move(request));
  }

  std::string head_;
  std::uint64_t body_left_ = 0;
  bool broken_ = false;
};

}  // namespace

// Everything but the atomics is touched on the io thread only.
class TcpProxy::Impl : public std::enable_shared_from_this<Impl> {
 public:
  explicit Impl(std::uint16_t upstream_port)
      : upstream_(asio::ip::make_address("127.0.0.1"), upstream_port), acceptor_(io_) {
    listen(0);
    port_ = acceptor_.local_endpoint().port();
  }

  void run() {
    thread_ = std::thread([self = shared_from_this()] { self->io_.run(); });
  }

  void shut_down() {
    run_on_io([this] {
      down_for_good_ = true;
      close_everything();
    });
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::uint16_t port() const { return port_; }

  void set_delay(std::chrono::milliseconds delay) { delay_ms_ = delay.count(); }
  void stall(int count) { stall_left_ = count; }
  void go_down() {
    run_on_io([this] { close_everything(); });
  }
  void come_up() {
    run_on_io([this] { reopen(); });
  }
  void outage_after(std::size_t chunks, std::chrono::milliseconds duration) {
    run_on_io([this, chunks, duration] {
      outage_at_ = chunks_ + chunks;
      outage_duration_ = duration;
      outage_armed_ = true;
    });
  }

  std::vector<ProxiedRequest> requests() const {
    std::lock_guard lock(requests_mutex_);
    return requests_;
  }

  std::atomic<std::size_t> chunks_{0};
  std::atomic<std::size_t> outages_{0};

 private:
  struct Session {
    explicit Session(asio::io_context& io) : client(io), server(io) {}
    tcp::socket client;
    tcp::socket server;
    std::array<char, 16384> upward{};
    std::array<char, 16384> downward{};
    RequestParser requests;
  };
  using SessionPtr = std::shared_ptr<Session>;

  template <typename Action>
  void run_on_io(Action action) {
    std::promise<void> done;
    asio::post(io_, [&] {
      action();
      done.set_value();
    });
    done.get_future().wait();
  }

  void listen(std::uint16_t port) {
    const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), port);
    acceptor_.open(at.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(at);
    acceptor_.listen();
    accept();
  }

  void reopen() {
    if (acceptor_.is_open() || down_for_good_) return;
    listen(port_);
  }

  void close_everything() {
    ++outages_;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (const auto& session : sessions_) {
      session->client.close(ignored);
      session->server.close(ignored);
    }
    sessions_.clear();
  }

  void accept() {
    auto session = std::make_shared<Session>(io_);
    acceptor_.async_accept(session->client, [this, session](boost::system::error_code error) {
      if (error) return;  // closed: go_down()
      sessions_.insert(session);
      accept();
      if (stall_left_ > 0) {
        --stall_left_;
        return;  // held open, never answered
      }
      session->server.async_connect(upstream_, [this, session](boost::system::error_code failed) {
        if (failed) return end(session);
        pump_up(session);
        pump_down(session);
      });
    });
  }

  void end(const SessionPtr& session) {
    boost::system::error_code ignored;
    session->client.close(ignored);
    session->server.close(ignored);
    sessions_.erase(session);
  }

  void pump_up(const SessionPtr& session) {
    session->client.async_read_some(
        asio::buffer(session->upward),
        [this, session](boost::system::error_code error, std::size_t n) {
          if (error) return end(session);
          record(*session, n);
          asio::async_write(session->server, asio::buffer(session->upward.data(), n),
                            [this, session](boost::system::error_code failed, std::size_t) {
                              if (failed) return end(session);
                              pump_up(session);
                            });
        });
  }

  void pump_down(const SessionPtr& session) {
    session->server.async_read_some(
        asio::buffer(session->downward),
        [this, session](boost::system::error_code error, std::size_t n) {
          if (error) return end(session);
          auto timer = std::make_shared<asio::steady_timer>(io_);
          timer->expires_after(std::chrono::milliseconds(delay_ms_.load()));
          timer->async_wait([this, session, timer, n](boost::system::error_code) {
            if (!session->client.is_open()) return;
            asio::async_write(session->client, asio::buffer(session->downward.data(), n),
                              [this, session](boost::system::error_code failed, std::size_t) {
                                if (failed) return end(session);
                                ++chunks_;
                                maybe_fail();
                                pump_down(session);
                              });
          });
        });
  }

  void record(Session& session, std::size_t n) {
    session.requests.feed(std::string_view(session.upward.data(), n), [this](ProxiedRequest made) {
      std::lock_guard lock(requests_mutex_);
      requests_.push_back(std::move(made));
    });
  }

  void maybe_fail() {
    if (!outage_armed_ || chunks_ < outage_at_) return;
    outage_armed_ = false;
    close_everything();
    auto timer = std::make_shared<asio::steady_timer>(io_);
    timer->expires_after(outage_duration_);
    timer->async_wait([this, timer](boost::system::error_code) { reopen(); });
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  tcp::endpoint upstream_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::set<SessionPtr> sessions_;
  std::thread thread_;
  std::atomic<std::int64_t> delay_ms_{0};
  std::atomic<int> stall_left_{0};
  bool down_for_good_ = false;
  bool outage_armed_ = false;
  std::size_t outage_at_ = 0;
  std::chrono::milliseconds outage_duration_{0};
  mutable std::mutex requests_mutex_;
  std::vector<ProxiedRequest> requests_;
};

TcpProxy::TcpProxy(std::uint16_t upstream_port) : impl_(std::make_shared<Impl>(upstream_port)) {
  impl_->run();
}

TcpProxy::~TcpProxy() {
  impl_->shut_down();
}

std::uint16_t TcpProxy::port() const {
  return impl_->port();
}

void TcpProxy::set_response_delay(std::chrono::milliseconds delay) {
  impl_->set_delay(delay);
}

void TcpProxy::stall_next_connections(int count) {
  impl_->stall(count);
}

void TcpProxy::go_down() {
  impl_->go_down();
}

void TcpProxy::come_up() {
  impl_->come_up();
}

void TcpProxy::outage_after(std::size_t chunks, std::chrono::milliseconds duration) {
  impl_->outage_after(chunks, duration);
}

std::size_t TcpProxy::chunks_forwarded() const {
  return impl_->chunks_.load();
}

std::size_t TcpProxy::outages() const {
  return impl_->outages_.load();
}

std::vector<ProxiedRequest> TcpProxy::requests() const {
  return impl_->requests();
}

}  // namespace rulestream::testing
