// RedisConnection against a real redis-server of the test's own (tests/support/redis_test_server).
#include "apps/coordination/redis_connection.hpp"

#include <gtest/gtest.h>

#include "tests/support/loopback_ports.hpp"
#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using testing::RedisServerTest;

class RedisConnectionTest : public RedisServerTest {};

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const RedisError& error) {
    return error.what();
  }
  return "(no RedisError)";
}

TEST_F(RedisConnectionTest, RepliesAreTyped) {
  RedisConnection redis(redis_->endpoint());
  EXPECT_EQ(redis.command({"SET", "k", "value"}).type, RedisReply::Type::Status);
  EXPECT_EQ(redis.command({"SET", "k", "value"}).as_string(), "OK");
  const RedisReply value = redis.command({"GET", "k"});
  EXPECT_EQ(value.type, RedisReply::Type::String);
  EXPECT_EQ(value.as_string(), "value");
  EXPECT_TRUE(redis.command({"GET", "absent"}).is_nil());
  EXPECT_EQ(redis.command({"INCR", "n"}).as_integer(), 1);
  EXPECT_EQ(redis.command({"INCRBY", "n", "41"}).as_integer(), 42);
  redis.command({"RPUSH", "list", "a", "b", "c"});
  const RedisReply range = redis.command({"LRANGE", "list", "0", "-1"});
  const auto& list = range.as_array();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].as_string(), "a");
  EXPECT_EQ(list[2].as_string(), "c");
}

TEST_F(RedisConnectionTest, BinaryValuesSurviveWhole) {
  RedisConnection redis(redis_->endpoint());
  const std::string bytes("a\0b\r\nc", 6);
  redis.command(std::vector<std::string>{"SET", "binary", bytes});
  EXPECT_EQ(redis.command({"GET", "binary"}).as_string(), bytes);
}

TEST_F(RedisConnectionTest, ErrorsNameTheServerAndTheCommandButNotItsValues) {
  RedisConnection redis(redis_->endpoint());
  redis.command({"SET", "word", "secret-value"});
  const std::string server = "redis 127.0.0.1:" + std::to_string(redis_->port());
  const std::string refused = error_of([&] { redis.command({"INCR", "word"}); });
  EXPECT_NE(refused.find(server + ": INCR word: ERR value is not an integer"), std::string::npos)
      << refused;
  const std::string mistyped = error_of([&] { redis.command({"GET", "word"}).as_integer(); });
  EXPECT_NE(mistyped.find(server + ": GET word: an integer expected, a string answered"),
            std::string::npos)
      << mistyped;
  EXPECT_EQ(mistyped.find("secret-value"), std::string::npos);
  const std::string script = error_of(
      [&] { redis.eval("bad-script", "return redis.call('INCR', KEYS[1])", {"word"}, {}); });
  EXPECT_NE(script.find(server + ": script bad-script on word:"), std::string::npos) << script;
  // The connection goes on after a refusal.
  EXPECT_EQ(redis.command({"GET", "word"}).as_string(), "secret-value");
}

TEST_F(RedisConnectionTest, ScriptsGetKeysAndArguments) {
  RedisConnection redis(redis_->endpoint());
  const RedisReply reply = redis.eval(
      "set-and-count", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('STRLEN', KEYS[1])",
      {"scripted"}, {"four"});
  EXPECT_EQ(reply.as_integer(), 4);
  EXPECT_EQ(redis.command({"GET", "scripted"}).as_string(), "four");
}

TEST_F(RedisConnectionTest, SelectsTheDatabaseOfTheUrl) {
  RedisEndpoint third = redis_->endpoint();
  third.database = 3;
  RedisConnection in_third(third);
  RedisConnection in_first(redis_->endpoint());
  in_third.command({"SET", "where", "three"});
  EXPECT_TRUE(in_first.command({"GET", "where"}).is_nil());
  in_first.command({"SELECT", "3"});
  EXPECT_EQ(in_first.command({"GET", "where"}).as_string(), "three");
}

TEST_F(RedisConnectionTest, ACommandOnABrokenConnectionFailsAndTheNextReconnects) {
  RedisEndpoint third = redis_->endpoint();
  third.database = 3;
  RedisConnection redis(third);
  redis.command({"SET", "before", "1"});
  ASSERT_TRUE(redis_->restart());  // every connection breaks; the data is gone (nothing saved)
  const std::string broken = error_of([&] { redis.command({"SET", "during", "1"}); });
  EXPECT_NE(broken.find("redis 127.0.0.1:" + std::to_string(redis_->port()) + ": SET during"),
            std::string::npos)
      << broken;
  redis.command({"SET", "after", "1"});
  // Reconnected to the same database: what it wrote is in the third, not the first.
  RedisConnection first(redis_->endpoint());
  EXPECT_TRUE(first.command({"GET", "after"}).is_nil());
  first.command({"SELECT", "3"});
  EXPECT_EQ(first.command({"GET", "after"}).as_string(), "1");
}

TEST_F(RedisConnectionTest, ASlowServerTimesOutNamingTheCommand) {
  RedisConnection sleeper(redis_->endpoint());
  RedisConnection impatient(redis_->endpoint(),
                            {std::chrono::milliseconds(2000), std::chrono::milliseconds(200)});
  // DEBUG SLEEP holds the server (single-threaded) for half a second: longer than 200 ms.
  std::thread hold([&] { sleeper.command({"DEBUG", "SLEEP", "0.5"}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string slow = error_of([&] { impatient.command({"GET", "k"}); });
  hold.join();
  EXPECT_NE(slow.find("GET k"), std::string::npos) << slow;
  EXPECT_TRUE(impatient.command({"GET", "k"}).is_nil());  // reconnected
}

TEST(RedisConnection, AServerThatIsNotThereIsNamed) {
  const std::uint16_t port = testing::free_port();  // nobody listens on it
  const std::string refused = error_of([&] { RedisConnection redis({"127.0.0.1", port, 0}); });
  EXPECT_NE(refused.find("redis 127.0.0.1:" + std::to_string(port) + ": cannot connect"),
            std::string::npos)
      << refused;
}

}  // namespace
}  // namespace rulestream
