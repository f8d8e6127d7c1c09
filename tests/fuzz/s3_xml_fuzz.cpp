// S3's XML answers: any bytes as a ListObjectsV2 page and as an error document (a broken or
// hostile S3-compatible endpoint). A bad page is a FormatError naming where it came from; dates
// never overflow.
#include <cstdint>

#include "core/model/exceptions.hpp"
#include "sources/s3/s3_xml.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  const std::string_view xml = fuzz::as_text(data, size);
  try {
    (void)parse_list_objects_v2(xml, "s3://fuzz/prefix");
  } catch (const FormatError&) {
  }
  (void)parse_s3_error(xml);
  (void)parse_s3_timestamp(xml);
  return 0;
}
