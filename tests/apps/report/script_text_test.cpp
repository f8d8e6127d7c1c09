#include "apps/report/script_text.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace rulestream {
namespace {

TEST(ScriptTextTest, JsonCannotEndItsScriptElementAndParsesBackTheSame) {
  const boost::json::value value = {{"tag", "</script><script>alert(1)</script>"},
                                    {"comment", "<!-- a & b -->"},
                                    {"separators",
                                     "a\xE2\x80\xA8"
                                     "b\xE2\x80\xA9"
                                     "c"}};
  const std::string safe = script_safe_json(value);
  for (const char* bad : {"<", ">", "&", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    EXPECT_EQ(safe.find(bad), std::string::npos) << bad << " in " << safe;
  }
  EXPECT_NE(safe.find("\\u003c/script\\u003e"), std::string::npos) << safe;
  EXPECT_EQ(boost::json::parse(safe), value);
}

TEST(ScriptTextTest, SourceThatWouldBreakItsElementIsRefusedByName) {
  EXPECT_EQ(checked_script_source("if (a < b) x = '<\\/p>';", "lib.js"),
            "if (a < b) x = '<\\/p>';");
  try {
    checked_script_source("var s = '</SCRIPT>';", "lib.js");
    FAIL() << "accepted </SCRIPT>";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("lib.js holds \"</script\""), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(checked_script_source("x = 1; <!-- y", "lib.js"), std::invalid_argument);
}

TEST(ScriptTextTest, HtmlEscapeWritesTheFiveCharacterReferences) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("gradient/fc1.weight"), "gradient/fc1.weight");
}

}  // namespace
}  // namespace rulestream
