// NameRegex: a search that leaves a leading ".*" out must give every name the verdict the
// pattern as written gives it.
#include "pipeline/model/name_regex.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace rulestream {
namespace {

TEST(NameRegex, SearchesWithoutALeadingDotStar) {
  EXPECT_EQ(searched_pattern(".*relu_output"), "relu_output");
  EXPECT_EQ(searched_pattern(".*.*?relu"), "relu");
  EXPECT_EQ(searched_pattern(".*"), "");
  EXPECT_EQ(searched_pattern(".*a|b"), "a|b");
  // Kept as written: no leading ".*", or one that a quantifier follows (an error to report).
  EXPECT_EQ(searched_pattern("^(?!gradient).*weight"), "^(?!gradient).*weight");
  EXPECT_EQ(searched_pattern("^.*relu"), "^.*relu");
  EXPECT_EQ(searched_pattern("\\.*relu"), "\\.*relu");
  EXPECT_EQ(searched_pattern(".*{2}x"), ".*{2}x");
  EXPECT_EQ(searched_pattern(".*?+x"), ".*?+x");
}

TEST(NameRegex, EveryNameGetsTheVerdictOfThePatternAsWritten) {
  const std::vector<std::string> patterns = {".*relu_output",
                                             ".*",
                                             ".*?relu",
                                             ".*a|b",
                                             ".*(relu|tanh)_output$",
                                             ".*^gradient",
                                             ".*$",
                                             "^(?!gradient).*weight",
                                             "[Ll]oss_(?!input).*output",
                                             ".*.*_0"};
  const std::vector<std::string> names = {"",
                                          "relu_output",
                                          "relu1_output_0",
                                          "MLP_relu_output",
                                          "tanh_output",
                                          "gradient/MLP_fc1.weight",
                                          "MLP_fc1.weight",
                                          "CrossEntropyLoss_output_0",
                                          "Loss_input_0",
                                          "b",
                                          "a\nrelu_output",
                                          "line\nbreak_0"};
  for (const std::string& pattern : patterns) {
    const NameRegex regex(pattern);
    const std::regex as_written(pattern, std::regex::ECMAScript);
    EXPECT_EQ(regex.pattern(), pattern);
    for (const std::string& name : names) {
      EXPECT_EQ(regex.found_in(name), std::regex_search(name, as_written))
          << "pattern '" << pattern << "', name '" << name << "'";
    }
  }
}

TEST(NameRegex, APatternThatDoesNotCompileIsAnErrorNamingIt) {
  EXPECT_THROW(NameRegex("relu("), std::regex_error);
  EXPECT_THROW(NameRegex(".*relu("), std::regex_error) << "compiled as written first";
  try {
    compile_name_regexes({"relu", ".*[a-"});
    FAIL() << "a bad regex must not compile";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("invalid tensor regex '.*[a-'"), std::string::npos)
        << error.what();
  }
  const auto compiled = compile_name_regexes({"^gradient", ".*bias"});
  EXPECT_TRUE(any_found_in(compiled, "MLP_fc1.bias"));
  EXPECT_TRUE(any_found_in(compiled, "gradient/x"));
  EXPECT_FALSE(any_found_in(compiled, "MLP_fc1.weight"));
}

}  // namespace
}  // namespace rulestream
