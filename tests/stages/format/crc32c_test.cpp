#include "stages/format/crc32c.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace rulestream {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::vector<std::byte> filled(std::size_t size, auto byte_at) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(byte_at(i));
  return bytes;
}

// Both implementations, so every known vector checks each of them.
struct Implementation {
  const char* name;
  std::uint32_t (*crc)(std::span<const std::byte>, std::uint32_t);
};
const Implementation kImplementations[] = {{"dispatching", &crc32c},
                                           {"portable", &crc32c_portable}};

TEST(Crc32cTest, KnownVectors) {
  for (const Implementation& impl : kImplementations) {
    SCOPED_TRACE(impl.name);
    EXPECT_EQ(impl.crc({}, 0), 0u);
    EXPECT_EQ(impl.crc(bytes_of("123456789"), 0), 0xE3069283u);
    EXPECT_EQ(impl.crc(bytes_of("a"), 0), 0xC1D04330u);
    EXPECT_EQ(impl.crc(bytes_of("hello world"), 0), 0xC99465AAu);
    // RFC 3720 (iSCSI), appendix B.4.
    EXPECT_EQ(impl.crc(filled(32, [](std::size_t) { return 0x00; }), 0), 0x8A9136AAu);
    EXPECT_EQ(impl.crc(filled(32, [](std::size_t) { return 0xff; }), 0), 0x62A8AB43u);
    EXPECT_EQ(impl.crc(filled(32, [](std::size_t i) { return i; }), 0), 0x46DD794Eu);
    EXPECT_EQ(impl.crc(filled(32, [](std::size_t i) { return 31 - i; }), 0), 0x113FDB5Cu);
    const std::vector<std::byte> read_pdu = filled(48, [](std::size_t i) -> unsigned {
      switch (i) {
        case 0:
          return 0x01;
        case 1:
          return 0xc0;
        case 16:
          return 0x14;
        case 22:
          return 0x04;
        case 27:
          return 0x14;
        case 31:
          return 0x18;
        case 32:
          return 0x28;
        case 40:
          return 0x02;
        default:
          return 0x00;
      }
    });
    EXPECT_EQ(impl.crc(read_pdu, 0), 0xD9963A56u);
  }
}

TEST(Crc32cTest, SeedExtendsAPreviousCrc) {
  const std::string_view whole = "The quick brown fox jumps over the lazy dog, twice over.";
  for (const Implementation& impl : kImplementations) {
    SCOPED_TRACE(impl.name);
    for (std::size_t cut = 0; cut <= whole.size(); ++cut) {
      const std::uint32_t head = impl.crc(bytes_of(whole.substr(0, cut)), 0);
      EXPECT_EQ(impl.crc(bytes_of(whole.substr(cut)), head), impl.crc(bytes_of(whole), 0))
          << "cut at " << cut;
    }
  }
}

TEST(Crc32cTest, SmdebugPlaceholderIsTheMaskedCrcOfItsText) {
  EXPECT_EQ(mask_crc(crc32c(bytes_of("0x12345678"))), kSmdebugPlaceholderFooter);
  EXPECT_EQ(mask_crc(crc32c_portable(bytes_of("0x12345678"))), kSmdebugPlaceholderFooter);
}

TEST(Crc32cTest, MaskingRoundTrips) {
  for (const std::uint32_t crc : {0u, 1u, 0xE3069283u, 0x80000000u, 0xffffffffu}) {
    EXPECT_EQ(unmask_crc(mask_crc(crc)), crc);
    EXPECT_NE(mask_crc(crc), crc);
  }
}

TEST(Crc32cTest, HardwareMatchesPortableOnRandomInput) {
  if (!crc32c_hardware_available()) GTEST_SKIP() << "this CPU has no SSE4.2 crc32 instruction";
  std::mt19937_64 random(20240611);
  // Around every block size the hardware path uses (8 x 8 KiB, 8 x 256 and 3 x 64 bytes), and
  // past several of the largest.
  std::vector<std::byte> buffer = filled(300'000 + 16, [&](std::size_t) { return random(); });
  std::vector<std::size_t> lengths = {
      0,      1,    7,    8,    9,     191,   192,   193,
      2047,   2048, 2049, 4096, 65535, 65536, 65537, 3 * 65536 + 2048 + 192 + 13,
      300'000};
  for (int i = 0; i < 300; ++i) lengths.push_back(random() % 100'000);
  for (const std::size_t length : lengths) {
    const std::size_t start = random() % 16;
    const auto seed = static_cast<std::uint32_t>(random());
    const std::span<const std::byte> data(buffer.data() + start, length);
    ASSERT_EQ(crc32c(data, seed), crc32c_portable(data, seed))
        << "length " << length << ", start " << start << ", seed " << seed;
  }
}

}  // namespace
}  // namespace rulestream
