// An index file: any bytes as JSON, through every reader (the canonical one and the
// parser-event one the loader tries first, and the document one they fall back to). A bad file
// is a FormatError naming it; when a reader in front reads a file, the document reader reads
// the same thing.
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "core/model/exceptions.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/index_file_canonical.hpp"
#include "stages/format/index_file_sax.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  const std::string_view json = fuzz::as_text(data, size);
  const std::optional<IndexFile> fast = parse_index_file_fast(json);
  const std::optional<IndexFile> canonical = parse_index_file_canonical(json);
  std::optional<IndexFile> document;
  try {
    document = parse_index_file_document(json, "fuzz.json");
  } catch (const FormatError&) {
  }
  for (const std::optional<IndexFile>* front : {&fast, &canonical}) {
    if (*front && !(document && **front == *document)) std::abort();
  }
  try {
    const IndexFile index = parse_index_file(json, "fuzz.json");
    (void)serialize_index_file(index);
  } catch (const FormatError&) {
  }
  return 0;
}
