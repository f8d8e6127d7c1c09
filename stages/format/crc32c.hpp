#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rulestream {

// CRC-32C (Castagnoli), as TFRecord uses it. Uses the SSE4.2 instruction when the CPU has it
// (checked once at run time) and a portable slicing-by-8 table otherwise.
std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t seed = 0);

// The portable implementation, always; exposed so tests and benchmarks can compare both.
std::uint32_t crc32c_portable(std::span<const std::byte> data, std::uint32_t seed = 0);

// True when crc32c() runs on the hardware instruction.
bool crc32c_hardware_available();

// TFRecord's masking: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
constexpr std::uint32_t mask_crc(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
constexpr std::uint32_t unmask_crc(std::uint32_t masked) {
  const std::uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

// The footer smdebug writes instead of the payload CRC: masked_crc32c(b"0x12345678").
inline constexpr std::uint32_t kSmdebugPlaceholderFooter = 0x062dc0b3u;

}  // namespace rulestream
