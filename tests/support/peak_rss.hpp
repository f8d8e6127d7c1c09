#pragma once

#include <cstddef>
#include <fstream>
#include <optional>
#include <string>

namespace rulestream::testing {

// What the kernel says this process holds in memory: a field of /proc/self/status in bytes
// ("VmRSS": now; "VmHWM": the peak since reset_peak_rss), nullopt where it does not say.
inline std::optional<std::size_t> resident_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with(field + ":")) continue;
    return static_cast<std::size_t>(std::stoull(line.substr(field.size() + 1))) * 1024;  // kB
  }
  return std::nullopt;
}

// Starts the peak (VmHWM) again from what is resident now (Linux 4.0 on); false where the
// kernel refuses.
inline bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

// Whether this build counts memory its own way (AddressSanitizer's shadow and quarantine):
// then a resident set says nothing about what the code holds.
constexpr bool resident_set_is_meaningful() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

}  // namespace rulestream::testing
