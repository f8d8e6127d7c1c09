#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rulestream {

// A read-only view of bytes that keeps whatever owns them alive: a heap buffer, a mapped file
// or a slice of a larger record. Copying is cheap (a shared_ptr and a span), so decoded
// tensors can point into the buffer they were read from instead of copying their data.
class SharedBytes {
 public:
  SharedBytes() = default;
  SharedBytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes)
      : owner_(std::move(owner)), bytes_(bytes) {}

  static SharedBytes copy_of(std::span<const std::byte> bytes);
  static SharedBytes from_vector(std::vector<std::byte> bytes);
  static SharedBytes from_string(std::string bytes);

  std::span<const std::byte> span() const { return bytes_; }
  const std::byte* data() const { return bytes_.data(); }
  std::size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  std::string_view as_string_view() const {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }

  // A sub-range sharing the same owner. Throws std::out_of_range when it does not fit.
  SharedBytes slice(std::size_t offset, std::size_t length) const;

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
};

}  // namespace rulestream
