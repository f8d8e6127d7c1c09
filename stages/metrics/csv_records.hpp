#pragma once

// CSV records as Python's csv module reads them with its default dialect (excel): fields split by
// commas, a field in double quotes may hold commas, newlines and doubled quotes, a record ends
// at an unquoted newline (LF or CRLF). Read from a window of a file that may end anywhere: a
// record the window ends inside is left for the next window.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

enum class CsvRecordStatus : unsigned char {
  Record,      // a whole record: `fields` holds it, `end` is past its newline
  Incomplete,  // the text ends inside a record (or before one starts)
};

// The record that starts at `begin` of `text`. With `text_is_all` (the file ends where the text
// does and will not grow), a last record without its newline is a record. Fields are unquoted,
// not stripped.
CsvRecordStatus next_csv_record(std::string_view text, std::size_t begin, bool text_is_all,
                                std::vector<std::string>& fields, std::size_t& end);

}  // namespace rulestream
