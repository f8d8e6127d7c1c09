// The HTTP server itself, spoken to over raw sockets: what a request it cannot read gets, HEAD,
// and the connection cap.
#include "apps/serve/http_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A server whose handler answers every request with the method and target it was given.
HttpServer echo_server(std::size_t max_connections = HttpServer::Options{}.max_connections) {
  return HttpServer(
      "127.0.0.1", 0,
      [](const HttpRequest& request) {
        return HttpResponse{200, "text/plain", request.method + " " + request.target + "\n", {}};
      },
      {.threads = 2, .max_connections = max_connections});
}

tcp::socket connect_to(asio::io_context& io, std::uint16_t port) {
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  return socket;
}

// Sends `bytes` as they are and reads until the server closes the connection.
std::string exchange(std::uint16_t port, const std::string& bytes) {
  asio::io_context io;
  tcp::socket socket = connect_to(io, port);
  asio::write(socket, asio::buffer(bytes));
  std::string reply;
  boost::system::error_code error;
  asio::read(socket, asio::dynamic_buffer(reply), error);  // to the end of the stream
  return reply;
}

TEST(HttpServerTest, AMalformedRequestGets400AndTheConnectionCloses) {
  const HttpServer server = echo_server();
  EXPECT_THAT(exchange(server.port(), "GET /a HTTP/1.1\r\nHost x\r\n\r\n"),
              StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_THAT(exchange(server.port(), "NOT HTTP AT ALL\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  // The server still answers a good request afterwards.
  EXPECT_THAT(exchange(server.port(), "GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n"),
              HasSubstr("GET /ok\n"));
}

TEST(HttpServerTest, ALongTargetGets414AndOversizeHeadersGet431) {
  const HttpServer server = echo_server();
  const std::string long_target = "/" + std::string(9000, 'a');
  EXPECT_THAT(exchange(server.port(), "GET " + long_target + " HTTP/1.1\r\n\r\n"),
              StartsWith("HTTP/1.1 414 URI Too Long\r\n"));
  const std::string big_header = "X-Big: " + std::string(70'000, 'b') + "\r\n";
  EXPECT_THAT(exchange(server.port(), "GET /a HTTP/1.1\r\n" + big_header + "\r\n"),
              StartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
}

TEST(HttpServerTest, HeadGetsTheHeadersOfGetAndNoBody) {
  const HttpServer server = echo_server();
  const std::string reply =
      exchange(server.port(), "HEAD /thing HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 200 OK\r\n"));
  // GET's body would be "HEAD /thing\n": 12 bytes, said and not sent.
  EXPECT_THAT(reply, HasSubstr("Content-Length: 12\r\n"));
  EXPECT_EQ(reply.substr(reply.find("\r\n\r\n") + 4), "");
}

// Slow answers (a report page replays its job) are made on a pool of their own: four of them
// at once, 2 s each, leave the two I/O threads free, and a probe is answered at once (had they
// held the I/O threads, it would wait 1.8 s). Before, 8 concurrent reports on 4 threads made
// /healthz wait 9.3 s.
TEST(HttpServerTest, SlowAnswersDoNotHoldTheProbes) {
  const HttpServer server(
      "127.0.0.1", 0,
      [](const HttpRequest& request) {
        if (request.target == "/slow") std::this_thread::sleep_for(std::chrono::seconds(2));
        return HttpResponse{200, "text/plain", request.target + "\n", {}};
      },
      {.threads = 2,
       .slow = [](const HttpRequest& request) { return request.target == "/slow"; },
       .slow_threads = 4});
  std::vector<std::thread> clients;
  std::atomic<int> slow_answered{0};
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      if (exchange(server.port(), "GET /slow HTTP/1.1\r\nConnection: close\r\n\r\n")
              .starts_with("HTTP/1.1 200")) {
        ++slow_answered;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the slow ones are in
  const auto asked = std::chrono::steady_clock::now();
  EXPECT_THAT(exchange(server.port(), "GET /fast HTTP/1.1\r\nConnection: close\r\n\r\n"),
              HasSubstr("/fast\n"));
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(1));
  for (auto& client : clients) client.join();
  EXPECT_EQ(slow_answered.load(), 4);
}

TEST(HttpServerTest, PastTheConnectionCapANewClientGets503) {
  const HttpServer server = echo_server(3);
  asio::io_context io;
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(connect_to(io, server.port()));
  // The idle ones are counted once the server has taken them: ask until the cap shows.
  std::string reply;
  for (int attempt = 0; attempt < 200 && !reply.starts_with("HTTP/1.1 503"); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    reply = exchange(server.port(), "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n");
  }
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_THAT(reply, HasSubstr("too many connections"));
  idle.clear();  // closed: the server serves again once it has seen them go
  bool served = false;
  for (int attempt = 0; attempt < 200 && !served; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    served = exchange(server.port(), "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n")
                 .starts_with("HTTP/1.1 200");
  }
  EXPECT_TRUE(served);
}

}  // namespace
}  // namespace rulestream
