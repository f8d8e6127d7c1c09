#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/model/shared_bytes.hpp"

namespace rulestream::fuzz {

// The fuzzer's bytes as text and as a SharedBytes that owns a copy (decoders may slice it).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
inline SharedBytes as_bytes(const std::uint8_t* data, std::size_t size) {
  return SharedBytes::copy_of(std::as_bytes(std::span(data, size)));
}

}  // namespace rulestream::fuzz
