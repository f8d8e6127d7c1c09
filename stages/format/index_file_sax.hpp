#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "stages/format/index_file.hpp"

namespace rulestream {

// Reads an index file straight off Boost.JSON's parser events, without building a document: the
// common case of parse_index_file, several times cheaper. It accepts only what
// parse_index_file_document accepts and then returns exactly what that would. Whenever it is
// unsure (malformed JSON, a missing, mistyped or repeated field, an unknown mode, a negative or
// fractional number, a mode name padded beyond a few characters) it returns nullopt, and the
// caller asks parse_index_file_document, which says what is wrong.
std::optional<IndexFile> parse_index_file_fast(std::string_view json);

// How many tensor and shape entries `json` holds at most (every entry is an object, so its
// braces less two bound them), to reserve for them at once: the vectors' regrowth was a
// noticeable part of a parse.
std::size_t index_entries_bound(std::string_view json);

}  // namespace rulestream
