#include "apps/coordination/redis_connection.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <memory>

namespace rulestream {
namespace {

timeval timeval_of(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};

RedisReply typed(const redisReply& reply, const std::string& context) {
  RedisReply result;
  result.context = context;
  switch (reply.type) {
    case REDIS_REPLY_NIL:
      result.type = RedisReply::Type::Nil;
      break;
    case REDIS_REPLY_INTEGER:
      result.type = RedisReply::Type::Integer;
      result.integer = reply.integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      result.type =
          reply.type == REDIS_REPLY_STRING ? RedisReply::Type::String : RedisReply::Type::Status;
      result.text.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_ARRAY:
      result.type = RedisReply::Type::Array;
      result.elements.reserve(reply.elements);
      for (std::size_t i = 0; i < reply.elements; ++i) {
        result.elements.push_back(typed(*reply.element[i], context));
      }
      break;
    case REDIS_REPLY_ERROR:
      throw RedisError(context + ": " + std::string(reply.str, reply.len));
    default:
      throw RedisError(context + ": a reply of unknown type " + std::to_string(reply.type));
  }
  return result;
}

std::string type_name(RedisReply::Type type) {
  switch (type) {
    case RedisReply::Type::Nil:
      return "nil";
    case RedisReply::Type::Integer:
      return "an integer";
    case RedisReply::Type::String:
      return "a string";
    case RedisReply::Type::Status:
      return "a status";
    case RedisReply::Type::Array:
      return "an array";
  }
  return "?";
}

}  // namespace

std::int64_t RedisReply::as_integer() const {
  if (type != Type::Integer)
    throw RedisError(context + ": an integer expected, " + type_name(type) + " answered");
  return integer;
}

const std::string& RedisReply::as_string() const {
  if (type != Type::String && type != Type::Status) {
    throw RedisError(context + ": a string expected, " + type_name(type) + " answered");
  }
  return text;
}

const std::vector<RedisReply>& RedisReply::as_array() const {
  if (type != Type::Array)
    throw RedisError(context + ": an array expected, " + type_name(type) + " answered");
  return elements;
}

RedisConnection::RedisConnection(RedisEndpoint endpoint, RedisConnectionOptions options)
    : endpoint_(std::move(endpoint)), options_(options) {
  connect();
}

RedisConnection::~RedisConnection() {
  if (context_) redisFree(context_);
}

void RedisConnection::connect() {
  if (context_) {
    redisFree(context_);
    context_ = nullptr;
  }
  const std::string where = "redis " + endpoint_.describe();
  context_ = redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port,
                                     timeval_of(options_.connect_timeout));
  if (!context_) throw RedisError(where + ": cannot allocate a connection");
  if (context_->err) {
    const std::string reason = context_->errstr;
    redisFree(context_);
    context_ = nullptr;
    throw RedisError(where + ": cannot connect: " + reason);
  }
  if (redisSetTimeout(context_, timeval_of(options_.command_timeout)) != REDIS_OK) {
    broken_ = true;
    throw RedisError(where + ": cannot set the command timeout");
  }
  broken_ = false;
  if (endpoint_.database != 0) {
    const std::string database = std::to_string(endpoint_.database);
    send({"SELECT", database}, "SELECT " + database);
  }
}

RedisReply RedisConnection::send(const std::vector<std::string_view>& args,
                                 const std::string& what) {
  if (!context_ || broken_) connect();
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  pointers.reserve(args.size());
  lengths.reserve(args.size());
  for (const std::string_view arg : args) {
    pointers.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  const std::string context = "redis " + endpoint_.describe() + ": " + what;
  std::unique_ptr<redisReply, ReplyDeleter> reply(static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(args.size()), pointers.data(), lengths.data())));
  if (!reply) {
    // The socket failed (reset, timeout, closed): hiredis' context cannot be used again.
    broken_ = true;
    throw RedisError(context + ": " + (context_->err ? context_->errstr : "no reply"));
  }
  return typed(*reply, context);
}

RedisReply RedisConnection::command(const std::vector<std::string>& args) {
  if (args.empty()) throw RedisError("redis " + endpoint_.describe() + ": an empty command");
  std::vector<std::string_view> views(args.begin(), args.end());
  // The command and its key name it; values (which may be large, or private) stay out.
  const std::string what = args.size() > 1 ? args[0] + " " + args[1] : args[0];
  return send(views, what);
}

RedisReply RedisConnection::command(std::initializer_list<std::string_view> args) {
  return command(std::vector<std::string>(args.begin(), args.end()));
}

RedisReply RedisConnection::eval(std::string_view name, std::string_view script,
                                 const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args) {
  const std::string key_count = std::to_string(keys.size());
  std::vector<std::string_view> full{"EVAL", script, key_count};
  full.insert(full.end(), keys.begin(), keys.end());
  full.insert(full.end(), args.begin(), args.end());
  std::string what = "script " + std::string(name);
  if (!keys.empty()) what += " on " + keys.front();
  return send(full, what);
}

}  // namespace rulestream
