// An index file: any bytes as JSON, through both readers (the parser-event one the loader uses,
// and the document one it falls back to). A bad file is a FormatError naming it; when the fast
// reader reads a file, the document reader reads the same thing.
#include <cstdint>
#include <cstdlib>

#include "pipeline/model/exceptions.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/index_file_sax.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  const std::string_view json = fuzz::as_text(data, size);
  const std::optional<IndexFile> fast = parse_index_file_fast(json);
  try {
    const IndexFile index = parse_index_file(json, "fuzz.json");
    (void)serialize_index_file(index);
    if (fast && !(*fast == parse_index_file_document(json, "fuzz.json"))) std::abort();
  } catch (const FormatError&) {
  }
  return 0;
}
