// The only file compiled with -msse4.2 (see CMakeLists.txt); crc32c() calls into it only after
// checking the CPU. Keep it free of shared inline code for the reason crc32c_hardware.hpp gives.
#include "stages/format/crc32c_hardware.hpp"

#include <nmmintrin.h>

#include <cstring>

namespace rulestream::detail {
namespace {

constexpr std::uint32_t kCastagnoliReflected = 0x82F63B78u;

// The crc32 instruction has a latency of three cycles, so one dependent chain runs at a third
// of its throughput or less (Intel issues one per cycle; recent AMD cores more than two). Long
// inputs are therefore cut into blocks of several equal lanes computed side by side, each lane
// starting from a zero register. CRC is linear over GF(2), so the lanes are joined, and the
// block appended to the running CRC, with "append N zero bytes" operators applied by table
// lookup. The running CRC's only serial step per block is one such lookup; the lanes are joined
// off that critical path. Lane counts and lengths were picked by measurement (format_bench).
// A linear operator on the 32-bit CRC register: column n is the image of bit n. (Plain arrays,
// not std::array, so that no std:: inline code is instantiated in this translation unit.)
struct Gf2Matrix {
  std::uint32_t column[32];
};

constexpr std::uint32_t gf2_apply(const Gf2Matrix& matrix, std::uint32_t vector) {
  std::uint32_t sum = 0;
  for (std::size_t bit = 0; vector != 0; ++bit, vector >>= 1) {
    if (vector & 1u) sum ^= matrix.column[bit];
  }
  return sum;
}

constexpr Gf2Matrix gf2_multiply(const Gf2Matrix& left, const Gf2Matrix& right) {
  Gf2Matrix product{};
  for (std::size_t column = 0; column < 32; ++column) {
    product.column[column] = gf2_apply(left, right.column[column]);
  }
  return product;
}

// The operator that feeds `bytes` zero bytes through the (reflected, unconditioned) register.
constexpr Gf2Matrix zero_bytes_operator(std::size_t bytes) {
  Gf2Matrix power{};  // one zero bit: shift right, folding the polynomial in on a carry
  power.column[0] = kCastagnoliReflected;
  for (std::size_t bit = 1; bit < 32; ++bit) power.column[bit] = 1u << (bit - 1);
  for (int doubling = 0; doubling < 3; ++doubling) power = gf2_multiply(power, power);

  Gf2Matrix result{};
  for (std::size_t bit = 0; bit < 32; ++bit) result.column[bit] = 1u << bit;
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1u) result = gf2_multiply(power, result);
    power = gf2_multiply(power, power);
  }
  return result;
}

// The operator split into one 256-entry table per byte of the register.
struct ShiftTable {
  std::uint32_t byte[4][256];
};

constexpr ShiftTable make_shift_table(std::size_t bytes) {
  const Gf2Matrix op = zero_bytes_operator(bytes);
  ShiftTable table{};
  for (std::uint32_t value = 0; value < 256; ++value) {
    for (std::size_t lane = 0; lane < 4; ++lane) {
      table.byte[lane][value] = gf2_apply(op, value << (8 * lane));
    }
  }
  return table;
}

inline std::uint32_t shift(const ShiftTable& table, std::uint32_t crc) {
  return table.byte[0][crc & 0xffu] ^ table.byte[1][(crc >> 8) & 0xffu] ^
         table.byte[2][(crc >> 16) & 0xffu] ^ table.byte[3][crc >> 24];
}

inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// Blocks of `Lanes` lanes of `LaneBytes` bytes each.
template <int Lanes, std::size_t LaneBytes>
struct LaneBlocks {
  static_assert(LaneBytes % 8 == 0);
  static constexpr std::size_t kBlockBytes = Lanes * LaneBytes;
  static constexpr ShiftTable kAfterLane = make_shift_table(LaneBytes);
  static constexpr ShiftTable kAfterBlock = make_shift_table(kBlockBytes);

  // Consumes as many whole blocks as `size` holds; returns the register after them.
  static std::uint32_t run(std::uint32_t crc, const unsigned char*& p, std::size_t& size) {
    for (; size >= kBlockBytes; p += kBlockBytes, size -= kBlockBytes) {
      std::uint64_t lane_crc[Lanes] = {};
      for (std::size_t i = 0; i < LaneBytes; i += 8) {
#pragma GCC unroll 8
        for (int lane = 0; lane < Lanes; ++lane) {
          lane_crc[lane] = _mm_crc32_u64(lane_crc[lane], load64(p + lane * LaneBytes + i));
        }
      }
      auto block_crc = static_cast<std::uint32_t>(lane_crc[0]);
#pragma GCC unroll 8
      for (int lane = 1; lane < Lanes; ++lane) {
        block_crc = shift(kAfterLane, block_crc) ^ static_cast<std::uint32_t>(lane_crc[lane]);
      }
      crc = shift(kAfterBlock, crc) ^ block_crc;
    }
    return crc;
  }
};

}  // namespace

std::uint32_t crc32c_hardware(const std::byte* data, std::size_t size, std::uint32_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  std::size_t n = size;
  std::uint32_t crc32 = ~seed;

  // Align the lanes' 8-byte loads (unaligned ones are legal, but may straddle cache lines).
  while (n > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7u) != 0) {
    crc32 = _mm_crc32_u8(crc32, *p++);
    --n;
  }
  crc32 = LaneBlocks<8, 8192>::run(crc32, p, n);
  crc32 = LaneBlocks<8, 256>::run(crc32, p, n);
  crc32 = LaneBlocks<3, 64>::run(crc32, p, n);  // what is left of 1 KiB records and the like
  std::uint64_t crc = crc32;
  for (; n >= 8; p += 8, n -= 8) crc = _mm_crc32_u64(crc, load64(p));
  crc32 = static_cast<std::uint32_t>(crc);
  for (; n > 0; --n) crc32 = _mm_crc32_u8(crc32, *p++);
  return ~crc32;
}

}  // namespace rulestream::detail
