// NameRegex: Python's re.search over tensor names, in Python's syntax. The expected verdicts are
// Python's: each was checked with python3's re.search(pattern, name) (and the errors with
// re.compile) when the test was written.
#include "core/model/name_regex.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

struct Case {
  std::string pattern;
  std::string name;
  bool found;
};

void expect_verdicts(const std::vector<Case>& cases) {
  for (const Case& each : cases) {
    EXPECT_EQ(NameRegex(each.pattern).found_in(each.name), each.found)
        << "pattern '" << each.pattern << "', name '" << each.name << "'";
  }
}

TEST(NameRegex, SearchesAnywhereInTheNameAsPythonsReSearch) {
  expect_verdicts({
      {".*relu_output", "MLP_relu_output", true},
      {".*relu_output", "relu1_output_0", false},
      {"relu", "MLP_relu_output", true},
      {".*", "", true},
      {"^gradient", "gradient/MLP_fc1.weight", true},
      {"^gradient", "a\ngradient", false},      // ^ is the start of the name only
      {"relu_output$", "relu_output\n", true},  // $ also before a final newline, as in Python
      {"^(?!gradient).*weight", "gradient/MLP_fc1.weight", false},
      {"^(?!gradient).*weight", "MLP_fc1.weight", true},
      {"[Ll]oss_(?!input).*output", "CrossEntropyLoss_output_0", true},
      {"[Ll]oss_(?!input).*output", "Loss_input_output", false},
  });
}

// smdebug's XGBoost hook writes this regex into every trial's collections ("metrics"): every
// `<set>-<metric>` except the ranking metrics auc and map. std::regex rejected the lookbehind,
// and `inspect` of any XGBoost trial exited 2.
TEST(NameRegex, ReadsSmdebugsXgboostMetricsRegex) {
  const std::string metrics = "^[a-zA-z]+-.+(?<!(auc|map))$";
  expect_verdicts({
      {metrics, "train-rmse", true},
      {metrics, "validation-logloss", true},
      {metrics, "train-auc", false},
      {metrics, "validation-map", false},
      {metrics, "f0", false},      // no set
      {metrics, "train-", false},  // no metric
  });
}

TEST(NameRegex, ReadsPythonOnlySyntax) {
  expect_verdicts({
      // Named groups and references to them.
      {"(?P<layer>fc\\d+)_(?P=layer)", "fc1_fc1", true},
      {"(?P<layer>fc\\d+)_(?P=layer)", "fc1_fc2", false},
      // Lookbehind.
      {"(?<=gradient/).*bias$", "gradient/MLP.bias", true},
      {"(?<=gradient/).*bias$", "MLP.bias", false},
      // {,n}: 0 to n times in Python (literal text to PCRE2 10.42, so it is rewritten).
      {"relu{,2}_out", "rel_out", true},
      {"relu{,2}_out", "reluu_out", true},
      {"relu{,2}_out", "reluuu_out", false},
      // ... but not inside a class or when its brace is escaped.
      {"[{,2}]x", "{x", true},
      {"a\\{,2}", "a{,2}", true},
      {"a\\{,2}", "aa", false},
      // Comments, and Python 3's Unicode word characters.
      {"relu(?#the activation)_out", "relu_out", true},
      {"^\\w+_out$", "réLU_out", true},
  });
}

TEST(NameRegex, RewritesOnlyPythonsOpenLowerBound) {
  EXPECT_EQ(pcre2_pattern_for_python("a{,3}"), "a{0,3}");
  EXPECT_EQ(pcre2_pattern_for_python("a{2,3}b{,}c{,x}"), "a{2,3}b{,}c{,x}");
  EXPECT_EQ(pcre2_pattern_for_python("[]{,3}]a\\{,3}"), "[]{,3}]a\\{,3}");
  EXPECT_EQ(pcre2_pattern_for_python("[^]{,3}]{,3}"), "[^]{,3}]{0,3}");
}

TEST(NameRegex, ANameThatIsNotUtf8IsNoError) {
  EXPECT_TRUE(NameRegex("relu").found_in(std::string("\xff\xfe_relu")));
  EXPECT_FALSE(NameRegex("^relu").found_in(std::string("\xff_relu")));
}

TEST(NameRegex, APatternThatDoesNotCompileIsAnErrorNamingIt) {
  try {
    NameRegex unclosed("relu(");
    FAIL() << "an unclosed group must not compile";
  } catch (const RegexError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("invalid tensor regex 'relu(': ", 0), 0u) << message;
    EXPECT_NE(message.find("at offset 5"), std::string::npos) << message;
  }
  // Python refuses a lookbehind of no fixed width too.
  EXPECT_THROW(NameRegex("(?<!a+)b"), RegexError);
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

// Rules and the loader match names from many threads with the same compiled patterns.
TEST(NameRegex, CopiesMatchFromManyThreadsAtOnce) {
  const NameRegex regex("^(?!gradient).*(weight|bias)$");
  std::vector<std::thread> threads;
  std::vector<int> found(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t, copy = regex] {
      for (int i = 0; i < 10'000; ++i) {
        found[t] += copy.found_in("layer" + std::to_string(i) + (i % 2 ? ".weight" : ".grad"));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(found, std::vector<int>(4, 5'000));
}

}  // namespace
}  // namespace rulestream
