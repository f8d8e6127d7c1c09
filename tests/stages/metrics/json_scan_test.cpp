// The JSON scanner reads values from windows that may end anywhere: every cut of a document
// before its end is Incomplete, never Invalid and never a wrong value.

#include "stages/metrics/json_scan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace rulestream {
namespace {

TEST(JsonScan, AFlatObjectGivesItsKeysAndNumbers) {
  const std::string text =
      R"({"loss": 0.25, "step": 10, "name": "a,b}", "ok": true, "none": null, )"
      R"("nested": {"x": [1, {"y": "]"}]}, "big": -1.5e3})";
  JsonScanner scanner(text);
  std::vector<JsonMember> members;
  ASSERT_EQ(scanner.flat_object(members), ScanStatus::Complete);
  EXPECT_EQ(scanner.position(), text.size());
  ASSERT_EQ(members.size(), 7U);
  EXPECT_EQ(members[0].key, "loss");
  EXPECT_EQ(members[0].value.kind, JsonScalar::Kind::Number);
  EXPECT_EQ(members[0].value.number, 0.25);
  EXPECT_EQ(members[1].value.number, 10.0);
  EXPECT_EQ(members[2].value.kind, JsonScalar::Kind::String);
  EXPECT_EQ(members[3].value.kind, JsonScalar::Kind::Bool);
  EXPECT_EQ(members[4].value.kind, JsonScalar::Kind::Null);
  EXPECT_EQ(members[5].value.kind, JsonScalar::Kind::Composite);
  EXPECT_EQ(members[6].key, "big");
  EXPECT_EQ(members[6].value.number, -1500.0);
}

TEST(JsonScan, PythonsNonFiniteTokensAreNumbers) {
  // json.dumps({"a": float("nan"), "b": float("inf"), "c": -float("inf")})
  const std::string text = R"({"a": NaN, "b": Infinity, "c": -Infinity})";
  JsonScanner scanner(text);
  std::vector<JsonMember> members;
  ASSERT_EQ(scanner.flat_object(members), ScanStatus::Complete);
  ASSERT_EQ(members.size(), 3U);
  EXPECT_TRUE(std::isnan(members[0].value.number));
  EXPECT_EQ(members[1].value.number, std::numeric_limits<double>::infinity());
  EXPECT_EQ(members[2].value.number, -std::numeric_limits<double>::infinity());
}

TEST(JsonScan, KeysAreDecoded) {
  // json.dumps({"accuracy/top1": 1, "\u00e9\ud83d\ude00": 2, "a\"b": 3})
  const std::string text = R"({"accuracy\/top1": 1, "\u00e9\ud83d\ude00": 2, "a\"b": 3})";
  JsonScanner scanner(text);
  std::vector<JsonMember> members;
  ASSERT_EQ(scanner.flat_object(members), ScanStatus::Complete);
  ASSERT_EQ(members.size(), 3U);
  EXPECT_EQ(members[0].key, "accuracy/top1");
  EXPECT_EQ(members[1].key, "\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(members[2].key, "a\"b");
}

TEST(JsonScan, EveryCutBeforeTheEndIsIncomplete) {
  const std::string text =
      R"({"lr": 1e-05, "s": "x\u00e9\"y", "v": [1, 2, {"k": "}"}], "n": NaN, "i": -Infinity, )"
      R"("t": true, "z": null, "step": 12} )";
  const std::size_t end = text.rfind('}') + 1;
  for (std::size_t cut = 0; cut < end; ++cut) {
    JsonScanner scanner(std::string_view(text).substr(0, cut));
    std::vector<JsonMember> members;
    EXPECT_EQ(scanner.flat_object(members), ScanStatus::Incomplete) << "cut at " << cut;
    EXPECT_EQ(scanner.position(), 0U) << "cut at " << cut;
  }
  JsonScanner whole(text);
  std::vector<JsonMember> members;
  ASSERT_EQ(whole.flat_object(members), ScanStatus::Complete);
  EXPECT_EQ(members.back().value.number, 12.0);
}

TEST(JsonScan, WhereTheFaultIs) {
  JsonScanner scanner(R"({"a": 1 "b": 2})");
  std::vector<JsonMember> members;
  ASSERT_EQ(scanner.flat_object(members), ScanStatus::Invalid);
  EXPECT_EQ(scanner.error(), "no ',' between members");
  EXPECT_EQ(scanner.error_position(), 8U);  // the quote of "b"
  EXPECT_EQ(scanner.position(), 0U);        // where the object started
}

TEST(JsonScan, WhatIsNoJsonIsInvalidAndSaysWhere) {
  for (const std::string text : {R"({"a": 1 "b": 2})", R"({a: 1})", R"({"a": tru})", R"({"a": +1})",
                                 R"({"a": 01x})", R"([1, 2])", R"({"\q": 1})"}) {
    JsonScanner scanner(text);
    std::vector<JsonMember> members;
    EXPECT_EQ(scanner.flat_object(members), ScanStatus::Invalid) << text;
    EXPECT_FALSE(scanner.error().empty()) << text;
    EXPECT_LT(scanner.error_position(), text.size()) << text;
  }
}

}  // namespace
}  // namespace rulestream
