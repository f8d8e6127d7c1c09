#include "stages/format/crc32c.hpp"

#include <array>

#include "stages/format/crc32c_hardware.hpp"

namespace rulestream {
namespace {

constexpr std::uint32_t kCastagnoliReflected = 0x82F63B78u;

// Slicing-by-8: table[k][b] is the CRC of byte b followed by k zero bytes, so eight input bytes
// fold into the register with eight independent lookups instead of eight dependent ones.
using SlicingTables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr SlicingTables make_slicing_tables() {
  SlicingTables tables{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kCastagnoliReflected : 0u);
    tables[0][byte] = crc;
  }
  for (std::size_t k = 1; k < tables.size(); ++k) {
    for (std::size_t byte = 0; byte < 256; ++byte) {
      const std::uint32_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xffu];
    }
  }
  return tables;
}

constexpr SlicingTables kTables = make_slicing_tables();

// Byte by byte so it is right on any host; compilers turn it into one load on little-endian.
std::uint64_t load_le64(const std::byte* p) {
  const auto at = [p](int i) { return std::to_integer<std::uint64_t>(p[i]) << (8 * i); };
  return at(0) | at(1) | at(2) | at(3) | at(4) | at(5) | at(6) | at(7);
}

bool detect_hardware() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

std::uint32_t crc32c_portable(std::span<const std::byte> data, std::uint32_t seed) {
  std::uint32_t crc = ~seed;
  const std::byte* p = data.data();
  std::size_t n = data.size();
  for (; n >= 8; p += 8, n -= 8) {
    const std::uint64_t word = load_le64(p) ^ crc;
    crc = kTables[7][word & 0xffu] ^ kTables[6][(word >> 8) & 0xffu] ^
          kTables[5][(word >> 16) & 0xffu] ^ kTables[4][(word >> 24) & 0xffu] ^
          kTables[3][(word >> 32) & 0xffu] ^ kTables[2][(word >> 40) & 0xffu] ^
          kTables[1][(word >> 48) & 0xffu] ^ kTables[0][word >> 56];
  }
  for (; n > 0; ++p, --n) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ std::to_integer<std::uint32_t>(*p)) & 0xffu];
  }
  return ~crc;
}

bool crc32c_hardware_available() {
  static const bool available = detect_hardware();
  return available;
}

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t seed) {
  if (crc32c_hardware_available()) return detail::crc32c_hardware(data.data(), data.size(), seed);
  return crc32c_portable(data, seed);
}

}  // namespace rulestream
