#include "sources/local/recycled_buffers.hpp"

#include <algorithm>
#include <atomic>

namespace rulestream {
namespace {

void ensure_capacity(RecycledBuffers::Buffer& buffer, std::size_t bytes) {
  if (buffer.capacity >= bytes) return;
  buffer.bytes = std::make_unique_for_overwrite<std::byte[]>(bytes);
  buffer.capacity = bytes;
}

}  // namespace

std::shared_ptr<RecycledBuffers::Buffer> RecycledBuffers::take(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (bytes <= largest_bytes_) {
    std::lock_guard lock(mutex_);
    for (const std::shared_ptr<Buffer>& buffer : buffers_) {
      // Only the pool holds it: nothing can take a new hold but through this lock. The count
      // is read relaxed; the fence orders the last holder's reads of the bytes (its release of
      // the count) before the caller's writes into them.
      if (buffer.use_count() != 1) continue;
      std::atomic_thread_fence(std::memory_order_acquire);
      ensure_capacity(*buffer, bytes);
      return buffer;
    }
    if (buffers_.size() < kept_) {
      buffers_.push_back(std::make_shared<Buffer>());
      ensure_capacity(*buffers_.back(), bytes);
      return buffers_.back();
    }
  }
  auto own = std::make_shared<Buffer>();
  ensure_capacity(*own, bytes);
  return own;
}

std::size_t RecycledBuffers::kept() const {
  std::lock_guard lock(mutex_);
  return buffers_.size();
}

}  // namespace rulestream
