#include "core/model/human_bytes.hpp"

#include <iomanip>
#include <sstream>

namespace rulestream {

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000.0 && unit < 4) {
    bytes /= 1000.0;
    ++unit;
  }
  std::ostringstream text;
  text << std::fixed << std::setprecision(unit == 0 ? 0 : 1) << bytes << " " << units[unit];
  return text.str();
}

}  // namespace rulestream
