#pragma once

#include <cstdint>

namespace rulestream {

// How many bytes of records a rule asks Trial::values_at for at a time. Values of local files
// are zero-copy slices of kept mappings whatever the figure, but values read from S3 or from
// compressed files are copies, all held until the rule is done with them.
inline constexpr std::uint64_t kValueBytesAtATime = std::uint64_t{32} << 20;

}  // namespace rulestream
