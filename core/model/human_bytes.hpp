#pragma once

#include <string>

namespace rulestream {

// A size for a person, in powers of 1000 with one decimal: "812 B", "1.2 MB", "3.4 GB".
std::string human_bytes(double bytes);

}  // namespace rulestream
