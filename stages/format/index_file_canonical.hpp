#pragma once

#include <optional>
#include <string_view>

#include "stages/format/index_file.hpp"

namespace rulestream {

// Reads an index file spelled exactly as smdebug's writers spell it (Python's json.dumps with
// its default separators and ensure_ascii, keys in smdebug's order):
//
//   {"meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": "events/..."},
//    "tensor_payload": [{"tensorname": "w", "start_idx": 0, "length": 1160}, ...],
//    "shape_payload": [{"tensorname": "w", "originalname": "w", "shape": [32, 20]}, ...]}
//
// (on one line), byte by byte, expecting each next byte: about a fifth of the instructions of
// parse_index_file_fast, which is most of Trial::open on a job of many tensors (a notebook's
// wait for its first value). Anything else (another spelling, whitespace, an escape or a byte
// above ASCII in a string, a number that is negative, fractional or of more than 18 digits, an
// unknown, missing or reordered key) gives nullopt, and parse_index_file asks the next reader.
// What it accepts, the document reader reads to the same IndexFile.
std::optional<IndexFile> parse_index_file_canonical(std::string_view json);

}  // namespace rulestream
