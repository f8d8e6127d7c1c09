#pragma once

// A connection to one Redis server (hiredis, blocking): connected with a timeout, each command
// with a timeout, each reply typed, each error naming the server and the command.

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "apps/coordination/redis_endpoint.hpp"
#include "core/model/exceptions.hpp"

struct redisContext;  // hiredis's; only redis_connection.cpp includes hiredis

namespace rulestream {

// The server could not be reached, did not answer in time, answered with an error (Redis'
// own, as "ERR ..." or a script's), or answered with another type than the caller needed.
// The message names the server and the command (its name and key, never its values).
class RedisError : public RulestreamError {
 public:
  using RulestreamError::RulestreamError;
};

// One reply, typed as RESP2 types it. The accessors throw RedisError naming `context` (the
// server and the command that got it) when the reply is of another type.
struct RedisReply {
  enum class Type { Nil, Integer, String, Status, Array };
  Type type = Type::Nil;
  std::int64_t integer = 0;
  std::string text;  // String (bulk) and Status
  std::vector<RedisReply> elements;
  std::string context;

  bool is_nil() const { return type == Type::Nil; }
  std::int64_t as_integer() const;
  const std::string& as_string() const;  // a bulk string or a status
  const std::vector<RedisReply>& as_array() const;
};

struct RedisConnectionOptions {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{2000};
};

// Not thread-safe: one connection per thread (a hiredis context holds one socket and its
// reply buffer). A command that fails on the socket (a reset, a timeout) leaves the connection
// broken: that command throws, and the next one reconnects first (and selects the database
// again). A command is never sent twice, so a failed INCR or script is the caller's to retry.
class RedisConnection {
 public:
  // Connects now; RedisError naming the server if it cannot.
  explicit RedisConnection(RedisEndpoint endpoint, RedisConnectionOptions options = {});
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command and waits for its reply. A Redis error reply throws RedisError.
  RedisReply command(const std::vector<std::string>& args);
  RedisReply command(std::initializer_list<std::string_view> args);

  // EVAL of a Lua script with its keys and arguments; `name` says which script in errors.
  RedisReply eval(std::string_view name, std::string_view script,
                  const std::vector<std::string>& keys, const std::vector<std::string>& args);

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  void connect();
  RedisReply send(const std::vector<std::string_view>& args, const std::string& what);

  const RedisEndpoint endpoint_;
  const RedisConnectionOptions options_;
  redisContext* context_ = nullptr;  // null or broken: connect() before the next command
  bool broken_ = false;
};

}  // namespace rulestream
