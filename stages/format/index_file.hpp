#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream {

// Where one tensor's record sits in its event file: a whole TFRecord (header, payload, footer).
struct TensorLocation {
  std::string tensor_name;
  std::uint64_t start = 0;
  std::uint64_t length = 0;

  friend bool operator==(const TensorLocation&, const TensorLocation&) = default;
};

// A saved shape (collections with save_shape: true).
struct ShapeEntry {
  std::string tensor_name;
  std::string original_name;
  Shape shape;

  friend bool operator==(const ShapeEntry&, const ShapeEntry&) = default;
};

// One index file: what a worker saved at one global step.
struct IndexFile {
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  std::optional<std::string> event_file_name;  // relative to the trial; absent without tensors
  std::vector<TensorLocation> tensors;
  std::optional<std::vector<ShapeEntry>> shapes;  // present only when a collection saves shapes

  friend bool operator==(const IndexFile&, const IndexFile&) = default;
};

// Parses an index file. A missing tensor_payload means no tensors (older writers). Throws
// FormatError naming `path` and the field at fault ("tensor_payload[3].start_idx") on malformed
// JSON (with line, column and byte), a missing or mistyped field, an unknown mode, a negative
// number, or tensors without meta.event_file_name. Reads smdebug's own spelling byte by byte
// first (parse_index_file_canonical), anything else off parser events (parse_index_file_fast,
// no document built), and falls back to parse_index_file_document whenever those are unsure,
// so results and messages are always the document reader's.
IndexFile parse_index_file(std::string_view json, const std::string& path);

// The reference reader: builds a Boost.JSON document and walks it. parse_index_file_canonical
// and parse_index_file_fast must agree with it on every file they accept
// (tests/stages/format/index_file_sax_test.cpp compares them).
IndexFile parse_index_file_document(std::string_view json, const std::string& path);

// Serialises as smdebug does (Python json.dumps with default separators, one line), so a
// trial written by rulestream is byte-for-byte shaped like smdebug's.
std::string serialize_index_file(const IndexFile& index);

}  // namespace rulestream
