// Event / Summary / TensorProto decoding: any bytes as a record's payload, decoded the ways the
// readers decode it (everything, one tag, located and decoded again). Malformed data is a
// FormatError; nothing else may leave, and memory stays bounded by what the record carries.
#include <cstdint>
#include <string>

#include "core/model/exceptions.hpp"
#include "stages/format/event_codec.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rulestream;
  const SharedBytes payload = fuzz::as_bytes(data, size);
  const std::string where = "fuzz.tfevents at offset 0";
  std::string first_tag;
  try {
    for (const DecodedTensor& tensor : decode_event(payload, where)) {
      if (first_tag.empty()) first_tag = tensor.name;
      (void)tensor.value.bytes().size();
    }
  } catch (const FormatError&) {
  }
  for (const std::string& tag : {first_tag, std::string("a")}) {
    try {
      if (const auto located = locate_tensor(payload, tag, where)) {
        (void)decode_tensor_at(payload, located->tensor_field, tag, where);
        const auto proto = tensor_proto_at(payload, located->tensor_field, tag, where);
        (void)tensor_proto_dtype(payload, proto, tag, where);
      }
    } catch (const FormatError&) {
    }
  }
  return 0;
}
