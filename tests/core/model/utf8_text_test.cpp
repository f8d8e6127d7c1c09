#include "core/model/utf8_text.hpp"

#include <gtest/gtest.h>

namespace rulestream {
namespace {

TEST(Utf8TextTest, WellFormedTextIsKeptAsItIs) {
  for (const std::string text : {"", "plain", "ρünï-コード", "\xF0\x9F\x98\x80 astral"}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_EQ(with_valid_utf8(text), text);
  }
}

// Each stray byte becomes one U+FFFD, as Python's bytes.decode(errors="replace") makes it for
// these cases; the characters around it are untouched.
TEST(Utf8TextTest, EachStrayByteIsReplaced) {
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(with_valid_utf8("bad-utf8-\xff"), "bad-utf8-" + replacement);
  EXPECT_EQ(with_valid_utf8("\xC3"), replacement);                    // a sequence cut short
  EXPECT_EQ(with_valid_utf8("\xC0\xAF"), replacement + replacement);  // overlong '/'
  EXPECT_EQ(with_valid_utf8("\xED\xA0\x80x"),                         // a surrogate, encoded
            replacement + replacement + replacement + "x");
  EXPECT_EQ(with_valid_utf8("a\xF5\x80\x80\x80"),
            "a" + replacement + replacement + replacement + replacement);  // > U+10FFFF
  EXPECT_FALSE(is_valid_utf8("bad-utf8-\xff"));
}

// Serialized JSON stays JSON: stray bytes are inside strings, never its structure.
TEST(Utf8TextTest, JsonWithAStrayByteBecomesValidJson) {
  EXPECT_EQ(with_valid_utf8("{\"id\": \"run-\xff\"}"), "{\"id\": \"run-\xEF\xBF\xBD\"}");
}

}  // namespace
}  // namespace rulestream
