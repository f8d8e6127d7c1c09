#include "core/model/python_json.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rulestream {
namespace {

std::string python_float(double value) {
  std::string out;
  append_python_float(out, value);
  return out;
}

std::string python_string(std::string_view text) {
  std::string out;
  append_python_json_string(out, text);
  return out;
}

// Expected values are what CPython 3's json.dumps prints for the same input.
TEST(PythonJsonTest, FloatsFollowRepr) {
  EXPECT_EQ(python_float(1.0), "1.0");
  EXPECT_EQ(python_float(0.1), "0.1");
  EXPECT_EQ(python_float(0.5), "0.5");
  EXPECT_EQ(python_float(100.0), "100.0");
  EXPECT_EQ(python_float(12345.678), "12345.678");
  EXPECT_EQ(python_float(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(python_float(-0.0), "-0.0");
  EXPECT_EQ(python_float(0.0), "0.0");
  // repr() switches to an exponent below 1e-4 and from 1e16 on.
  EXPECT_EQ(python_float(0.0001), "0.0001");
  EXPECT_EQ(python_float(1e-5), "1e-05");
  EXPECT_EQ(python_float(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(python_float(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float(9007199254740992.0), "9007199254740992.0");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(1e22), "1e+22");
  EXPECT_EQ(python_float(123456789012345680.0), "1.2345678901234568e+17");
  EXPECT_EQ(python_float(1.5e300), "1.5e+300");
  EXPECT_EQ(python_float(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(python_float(std::numeric_limits<double>::denorm_min()), "5e-324");
}

TEST(PythonJsonTest, NonFiniteFloatsAreBareWords) {
  EXPECT_EQ(python_float(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(python_float(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(python_float(-std::numeric_limits<double>::infinity()), "-Infinity");
}

TEST(PythonJsonTest, StringsAreAsciiWithLowercaseEscapes) {
  EXPECT_EQ(python_string("plain MLP_fc1.weight"), "\"plain MLP_fc1.weight\"");
  EXPECT_EQ(
      python_string("\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x98\x80\"\\\n\x7f\x01\x1f\t\b\f\r"
                    "\xef\xbf\xbf\xf4\x8f\xbf\xbf"),
      R"("\u00e9/\u65e5\u672c/\ud83d\ude00\"\\\n\u007f\u0001\u001f\t\b\f\r\uffff\udbff\udfff")");
  EXPECT_EQ(python_string(std::string_view("a\0b", 3)), R"("a\u0000b")");
}

TEST(PythonJsonTest, InvalidUtf8IsRejected) {
  for (const std::string_view bad :
       {"\x80", "\xc0\xaf", "\xed\xa0\x80", "\xe6\x97", "\xf4\x90\x80\x80", "ok\xff"}) {
    EXPECT_THROW(python_string(bad), std::invalid_argument) << "input: " << bad;
  }
}

// Names read from a file system: each stray byte as Python writes the name os.listdir gave it
// (surrogateescape). Expected strings from Python 3.11:
// json.dumps(b.decode("utf-8", "surrogateescape")).
TEST(PythonJsonTest, InvalidUtf8InANameIsWrittenAsPythonWritesIt) {
  const std::vector<std::pair<std::string_view, std::string>> cases{
      {"\x80", R"("\udc80")"},
      {"\xc0\xaf", R"("\udcc0\udcaf")"},
      {"\xed\xa0\x80", R"("\udced\udca0\udc80")"},
      {"\xe6\x97", R"("\udce6\udc97")"},
      {"\xf4\x90\x80\x80", R"("\udcf4\udc90\udc80\udc80")"},
      {"bad-utf8-\xff/\xc3\xa9", R"("bad-utf8-\udcff/\u00e9")"}};
  for (const auto& [name, expected] : cases) {
    std::string out;
    append_python_json_string(out, name, InvalidUtf8::SurrogateEscape);
    EXPECT_EQ(out, expected);
  }
  EXPECT_EQ(dump_python_json(boost::json::object{{"run", "x\xff"}}, InvalidUtf8::SurrogateEscape),
            R"({"run": "x\udcff"})");
}

TEST(PythonJsonTest, DumpsNestedValuesWithDefaultSeparatorsInInsertionOrder) {
  const boost::json::value value = {
      {"z", boost::json::array{1, -2, std::numeric_limits<std::uint64_t>::max(), true, nullptr,
                               boost::json::object{}}},
      {"b", boost::json::array{}},
      {"c", {{"d", 1.5}}}};
  EXPECT_EQ(dump_python_json(value),
            R"({"z": [1, -2, 18446744073709551615, true, null, {}], "b": [], "c": {"d": 1.5}})");
}

TEST(PythonJsonTest, EscapesObjectKeysToo) {
  const boost::json::value value = {{"\xc3\xa9", 1}};
  EXPECT_EQ(dump_python_json(value), R"({"\u00e9": 1})");
}

}  // namespace
}  // namespace rulestream
