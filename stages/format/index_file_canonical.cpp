#include "stages/format/index_file_canonical.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "stages/format/index_file_sax.hpp"

namespace rulestream {
namespace {

// The bytes that stand for themselves inside a JSON string (printable ASCII) less the quote that
// ends it and the backslash that starts an escape: one table look-up per byte of a name.
constexpr std::array<bool, 256> kPlainByte = [] {
  std::array<bool, 256> plain{};
  for (int byte = 0x20; byte < 0x7f; ++byte) plain[static_cast<std::size_t>(byte)] = true;
  plain['"'] = false;
  plain['\\'] = false;
  return plain;
}();

// Reads `json` from the front, each call expecting what must come next and consuming it only
// when it is there.
class CanonicalScanner {
 public:
  explicit CanonicalScanner(std::string_view json)
      : at_(json.data()), end_(json.data() + json.size()) {}

  // The exact bytes `expected`.
  bool literal(std::string_view expected) {
    if (static_cast<std::size_t>(end_ - at_) < expected.size() ||
        std::memcmp(at_, expected.data(), expected.size()) != 0) {
      return false;
    }
    at_ += expected.size();
    return true;
  }

  // A string whose every byte stands for itself in JSON: printable ASCII other than '\\' (an
  // escape would need decoding; json.dumps escapes every byte above ASCII by default), so the
  // text between the quotes is the value the document reader reads.
  std::optional<std::string_view> plain_string() {
    if (!literal("\"")) return std::nullopt;
    const char* const begin = at_;
    while (at_ != end_ && kPlainByte[static_cast<unsigned char>(*at_)]) ++at_;
    if (!literal("\"")) return std::nullopt;  // the end, or a byte that is not plain
    return std::string_view(begin, static_cast<std::size_t>(at_ - 1 - begin));
  }

  // A non-negative integer as JSON spells it (no sign, no leading zero, no fraction or exponent)
  // of at most 18 digits: below 2^63, so any two of them add without overflow.
  std::optional<std::uint64_t> small_count() {
    constexpr int kMostDigits = 18;
    const char* const begin = at_;
    std::uint64_t value = 0;
    while (at_ != end_ && *at_ >= '0' && *at_ <= '9') {
      if (at_ - begin == kMostDigits) return std::nullopt;
      value = value * 10 + static_cast<std::uint64_t>(*at_ - '0');
      ++at_;
    }
    const auto digits = at_ - begin;
    if (digits == 0 || (digits > 1 && *begin == '0')) return std::nullopt;
    if (at_ != end_ && (*at_ == '.' || *at_ == 'e' || *at_ == 'E')) return std::nullopt;
    return value;
  }

  bool next_is(char c) const { return at_ != end_ && *at_ == c; }

  // Only JSON's whitespace is left (a writer may end the file with a newline).
  bool at_end() {
    while (at_ != end_ && (*at_ == ' ' || *at_ == '\n' || *at_ == '\r' || *at_ == '\t')) ++at_;
    return at_ == end_;
  }

 private:
  const char* at_;
  const char* end_;
};

std::optional<Mode> mode_named(std::string_view name) {
  for (const Mode mode : kAllModes) {
    if (mode_name(mode) == name) return mode;
  }
  return std::nullopt;
}

bool read_meta(CanonicalScanner& scan, IndexFile& index) {
  if (!scan.literal(R"({"meta": {"mode": )")) return false;
  const auto mode_text = scan.plain_string();
  const auto mode = mode_text ? mode_named(*mode_text) : std::nullopt;
  if (!mode || !scan.literal(R"(, "mode_step": )")) return false;
  const auto mode_step = scan.small_count();
  if (!mode_step) return false;
  index.mode = *mode;
  index.mode_step = static_cast<std::int64_t>(*mode_step);
  if (scan.literal(R"(, "event_file_name": )")) {
    const auto event_file = scan.plain_string();
    if (!event_file) return false;
    index.event_file_name.emplace(*event_file);
  }
  return scan.literal("}");
}

bool read_tensors(CanonicalScanner& scan, std::size_t entries_bound, IndexFile& index) {
  if (!scan.literal("[")) return false;
  if (scan.literal("]")) return true;
  index.tensors.reserve(entries_bound);
  do {
    if (!scan.literal(R"({"tensorname": )")) return false;
    const auto name = scan.plain_string();
    if (!name || !scan.literal(R"(, "start_idx": )")) return false;
    const auto start = scan.small_count();
    if (!start || !scan.literal(R"(, "length": )")) return false;
    const auto length = scan.small_count();
    if (!length || !scan.literal("}")) return false;
    index.tensors.push_back(TensorLocation{std::string(*name), *start, *length});
  } while (scan.literal(", "));
  return scan.literal("]");
}

bool read_dims(CanonicalScanner& scan, Shape& shape) {
  if (!scan.literal("[")) return false;
  if (scan.literal("]")) return true;
  do {
    const auto dim = scan.small_count();
    if (!dim) return false;
    shape.push_back(static_cast<std::int64_t>(*dim));
  } while (scan.literal(", "));
  return scan.literal("]");
}

bool read_shapes(CanonicalScanner& scan, std::size_t entries_bound, IndexFile& index) {
  if (!scan.literal("[")) return false;
  std::vector<ShapeEntry>& shapes = index.shapes.emplace();
  if (scan.literal("]")) return true;
  shapes.reserve(entries_bound - std::min(entries_bound, index.tensors.size()));
  do {
    if (!scan.literal(R"({"tensorname": )")) return false;
    const auto name = scan.plain_string();
    if (!name || !scan.literal(R"(, "originalname": )")) return false;
    const auto original = scan.plain_string();
    if (!original || !scan.literal(R"(, "shape": )")) return false;
    ShapeEntry& entry = shapes.emplace_back();
    entry.tensor_name = *name;
    entry.original_name = *original;
    if (!read_dims(scan, entry.shape) || !scan.literal("}")) return false;
  } while (scan.literal(", "));
  return scan.literal("]");
}

}  // namespace

std::optional<IndexFile> parse_index_file_canonical(std::string_view json) {
  CanonicalScanner scan(json);
  IndexFile index;
  if (!read_meta(scan, index)) return std::nullopt;
  const std::size_t entries_bound = index_entries_bound(json);
  if (scan.literal(R"(, "tensor_payload": )") && !read_tensors(scan, entries_bound, index)) {
    return std::nullopt;
  }
  if (scan.literal(R"(, "shape_payload": )") && !read_shapes(scan, entries_bound, index)) {
    return std::nullopt;
  }
  if (!scan.literal("}") || !scan.at_end()) return std::nullopt;
  // The document reader refuses tensors without an event file to find them in.
  if (!index.tensors.empty() && !index.event_file_name) return std::nullopt;
  return index;
}

}  // namespace rulestream
