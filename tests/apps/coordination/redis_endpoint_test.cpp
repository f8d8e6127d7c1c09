#include "apps/coordination/redis_endpoint.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace rulestream {
namespace {

std::string error_of(std::string_view url) {
  try {
    parse_redis_url(url);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(RedisEndpoint, ReadsHostPortAndDatabase) {
  const RedisEndpoint endpoint = parse_redis_url("redis://10.0.0.7:6380/3");
  EXPECT_EQ(endpoint.host, "10.0.0.7");
  EXPECT_EQ(endpoint.port, 6380);
  EXPECT_EQ(endpoint.database, 3);
  EXPECT_EQ(endpoint.describe(), "10.0.0.7:6380");
}

TEST(RedisEndpoint, PortAndDatabaseDefaultAsRedisDoes) {
  const RedisEndpoint endpoint = parse_redis_url("redis://redis.internal");
  EXPECT_EQ(endpoint.host, "redis.internal");
  EXPECT_EQ(endpoint.port, 6379);
  EXPECT_EQ(endpoint.database, 0);
}

TEST(RedisEndpoint, TakesIpv6InBrackets) {
  const RedisEndpoint endpoint = parse_redis_url("redis://[::1]:7000/15");
  EXPECT_EQ(endpoint.host, "::1");
  EXPECT_EQ(endpoint.port, 7000);
  EXPECT_EQ(endpoint.database, 15);
  EXPECT_EQ(endpoint.describe(), "[::1]:7000");
}

TEST(RedisEndpoint, RefusesWhatIsNotARedisUrlNamingTheFault) {
  EXPECT_NE(error_of("http://127.0.0.1:6379").find("not a redis:// URL"), std::string::npos);
  EXPECT_NE(error_of("redis://:6379").find("no host"), std::string::npos);
  EXPECT_NE(error_of("redis://h:0").find("port must be 1..65535, not '0'"), std::string::npos);
  EXPECT_NE(error_of("redis://h:65536").find("not '65536'"), std::string::npos);
  EXPECT_NE(error_of("redis://h:").find("not ''"), std::string::npos);
  EXPECT_NE(error_of("redis://h:6379/16").find("database must be 0..15, not '16'"),
            std::string::npos);
  EXPECT_NE(error_of("redis://h:6379/x").find("not 'x'"), std::string::npos);
  EXPECT_NE(error_of("redis://[::1:6379").find("'[' without ']'"), std::string::npos);
}

TEST(RedisEndpoint, RefusesAPasswordWithoutSayingIt) {
  const std::string error = error_of("redis://user:hunter2@127.0.0.1:6379");
  EXPECT_NE(error.find("passwords are not taken"), std::string::npos);
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
}

}  // namespace
}  // namespace rulestream
