// A collections file: any bytes as JSON. A bad file is a FormatError naming it (a regex that does
// not compile is a problem, not an error); what parses serialises and parses back the same.
#include <cstdint>
#include <cstdlib>

#include "core/model/exceptions.hpp"
#include "stages/format/collections_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  try {
    const CollectionsFile parsed = parse_collections_file(fuzz::as_text(data, size), "fuzz.json");
    const CollectionsFile again =
        parse_collections_file(serialize_collections_file(parsed), "again.json");
    if (again.collections != parsed.collections) std::abort();
  } catch (const FormatError&) {
  }
  return 0;
}
