// TFRecord framing and inflation: any bytes as an event file. A bad record is an issue in the
// scan, never a crash, an out-of-bounds read or an allocation past the memory budget.
#include <cstdint>

#include "core/model/exceptions.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  const SharedBytes bytes = fuzz::as_bytes(data, size);
  SharedBytes file = bytes;
  const auto head = bytes.span().first(std::min<std::size_t>(bytes.size(), 64));
  if (const Compression compression = detect_compression(head); compression != Compression::None) {
    try {
      file = decompress_file(bytes, compression, "fuzz.tfevents", std::uint64_t{64} << 20);
    } catch (const FormatError&) {
      return 0;
    }
  }
  for (const bool check : {true, false}) {
    const RecordScan scan = scan_records(file, 0, "fuzz.tfevents", {.check_data_crc = check});
    for (const auto& record : scan.records) {
      (void)frame_record_at(file.span(), record.offset, {.check_data_crc = check});
    }
  }
  return 0;
}
