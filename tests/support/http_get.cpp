#include "tests/support/http_get.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace rulestream::testing {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                       const std::string& authorization) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(60));  // a report page replays the job
  stream.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  if (!authorization.empty()) request.set(http::field::authorization, authorization);
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  parser.skip(method == "HEAD");  // its Content-Length is GET's; no body follows
  http::read(stream, buffer, parser);
  const auto& response = parser.get();
  HttpReply reply;
  reply.status = response.result_int();
  reply.content_type = std::string(response[http::field::content_type]);
  reply.www_authenticate = std::string(response[http::field::www_authenticate]);
  reply.body = response.body();
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return reply;
}

}  // namespace rulestream::testing
