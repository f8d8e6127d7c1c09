#pragma once

#include <cstddef>
#include <cstdint>

namespace rulestream::detail {

// CRC-32C on the SSE4.2 `crc32` instruction. Only call it when the CPU has SSE4.2
// (crc32c_hardware_available()). It takes a plain pointer on purpose: its translation unit is
// the one compiled with -msse4.2, and instantiating shared inline code there (std::span...)
// could let the linker keep an SSE4.2 copy of it for callers that run on any CPU.
std::uint32_t crc32c_hardware(const std::byte* data, std::size_t size, std::uint32_t seed);

}  // namespace rulestream::detail
