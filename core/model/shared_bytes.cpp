#include "core/model/shared_bytes.hpp"

#include <stdexcept>

namespace rulestream {

SharedBytes SharedBytes::of_kept_mapping(std::shared_ptr<const void> owner,
                                         std::span<const std::byte> bytes) {
  SharedBytes mapped(std::move(owner), bytes);
  mapped.in_kept_mapping_ = true;
  return mapped;
}

SharedBytes SharedBytes::of_recycled_copy(std::shared_ptr<const void> owner,
                                          std::span<const std::byte> bytes) {
  SharedBytes copied(std::move(owner), bytes);
  copied.recycled_ = true;
  return copied;
}

SharedBytes SharedBytes::copy_of(std::span<const std::byte> bytes) {
  return from_vector(std::vector<std::byte>(bytes.begin(), bytes.end()));
}

SharedBytes SharedBytes::from_vector(std::vector<std::byte> bytes) {
  auto owner = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  const std::span<const std::byte> view(owner->data(), owner->size());
  return SharedBytes(std::move(owner), view);
}

SharedBytes SharedBytes::from_string(std::string bytes) {
  auto owner = std::make_shared<const std::string>(std::move(bytes));
  const std::span<const std::byte> view(reinterpret_cast<const std::byte*>(owner->data()),
                                        owner->size());
  return SharedBytes(std::move(owner), view);
}

SharedBytes SharedBytes::counted_apart() const {
  SharedBytes apart = *this;
  if (owner_) apart.owner_ = std::make_shared<const std::shared_ptr<const void>>(owner_);
  return apart;
}

SharedBytes SharedBytes::slice(std::size_t offset, std::size_t length) const {
  if (offset > bytes_.size() || length > bytes_.size() - offset) {
    throw std::out_of_range("SharedBytes::slice: [" + std::to_string(offset) + ", +" +
                            std::to_string(length) + ") outside " + std::to_string(bytes_.size()) +
                            " bytes");
  }
  SharedBytes part(owner_, bytes_.subspan(offset, length));
  part.owner_size_ = owner_size_;
  part.in_kept_mapping_ = in_kept_mapping_;
  part.recycled_ = recycled_;
  return part;
}

}  // namespace rulestream
