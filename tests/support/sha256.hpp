#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace rulestream::testing {

// SHA-256 as specified by FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3, 6.2).
//
// The conformance suite compares tensor bytes with the digests smdebug's side recorded
// (hashlib.sha256 of the C-contiguous numpy buffer); the project takes no crypto dependency,
// so the tests carry their own implementation, checked against the standard vectors.
class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();

  // Feeds more message bytes; may be called any number of times before finish().
  void update(std::span<const std::byte> bytes);
  void update(std::string_view text);

  // Pads the message and returns its digest. The object must not be used afterwards.
  Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lower-case hexadecimal, as Python's hexdigest() prints it.
std::string to_hex(const Sha256::Digest& digest);

std::string sha256_hex(std::span<const std::byte> bytes);
std::string sha256_hex(std::string_view text);

}  // namespace rulestream::testing
