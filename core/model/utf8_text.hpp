#pragma once

// Names come from file systems and object stores, which hold bytes, not text: a folder named
// with a Latin-1 byte is a job like any other. JSON must be UTF-8, and one such name once made
// /api/jobs invalid for every job.

#include <string>
#include <string_view>

namespace rulestream {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD (as
// Python's errors="replace" does), the rest unchanged. Bytes of 0x80 and above are never JSON's
// structure, so serialized JSON stays JSON through this.
std::string with_valid_utf8(std::string text);

}  // namespace rulestream
