// A rules file: any bytes as the user's configuration. A bad one is a clear error naming the
// file, the rule or the parameter (RuleConfigError, FormatError, std::invalid_argument), never
// a crash.
#include <cstdint>
#include <stdexcept>

#include "core/model/exceptions.hpp"
#include "engine/graph/rules_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  try {
    (void)parse_rules_file(fuzz::as_text(data, size), "fuzz-rules.json");
  } catch (const RulestreamError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
