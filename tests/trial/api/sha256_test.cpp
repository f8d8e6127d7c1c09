#include "tests/support/sha256.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rulestream::testing {
namespace {

// NIST's examples for FIPS 180-4 (csrc.nist.gov, "SHA256.pdf", "SHA2_Additional.pdf").
TEST(Sha256, NistVectors) {
  EXPECT_EQ(sha256_hex(std::string_view("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string_view("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // 448 bits: the padding needs a second block.
  EXPECT_EQ(
      sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string_view(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqkl"
                "mnopqrlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionA) {
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the padding boundaries (55 bytes is the longest message that pads within
// one block; 56..63 need a second one; 64 fills a block exactly). Digests from Python's
// hashlib.
TEST(Sha256, PaddingBoundaries) {
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {57, "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto& [length, digest] : cases) {
    SCOPED_TRACE(length);
    EXPECT_EQ(sha256_hex(std::string(length, 'a')), digest);
  }
}

TEST(Sha256, EveryByteValue) {
  std::vector<std::byte> bytes(256);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i);
  EXPECT_EQ(sha256_hex(bytes), "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880");
}

// Feeding a message in pieces of any size gives the digest of the whole.
TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  std::string message;
  for (int i = 0; i < 300; ++i) message.push_back(static_cast<char>('0' + i % 75));
  const std::string whole = sha256_hex(message);
  for (const std::size_t piece : {1u, 3u, 55u, 63u, 64u, 65u, 128u, 299u}) {
    SCOPED_TRACE(piece);
    Sha256 hash;
    for (std::size_t at = 0; at < message.size(); at += piece) {
      hash.update(std::string_view(message).substr(at, piece));
    }
    EXPECT_EQ(to_hex(hash.finish()), whole);
  }
}

}  // namespace
}  // namespace rulestream::testing
