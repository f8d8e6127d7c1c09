#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace rulestream {

// Buffers for reads whose bytes are let go of soon (LocalStorage::read_records_range): a buffer is
// handed out again once nothing holds it (nor any slice of it), so a reader going through a
// step's records a batch at a time reuses the same few buffers. A fresh buffer each time took
// fresh pages each time, every one of them faulted in and zeroed by the kernel.
// Thread-safe. A caller that keeps what it read only keeps buffers out of reuse: when all the
// kept ones are held, or a request is larger than `largest_bytes`, take() gives a buffer of its
// own that is freed as usual.
class RecycledBuffers {
 public:
  struct Buffer {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t capacity = 0;
  };

  explicit RecycledBuffers(std::size_t kept = 8, std::size_t largest_bytes = std::size_t{4} << 20)
      : kept_(kept), largest_bytes_(largest_bytes) {}

  // A buffer of at least `bytes` bytes that nothing else holds (contents unspecified).
  std::shared_ptr<Buffer> take(std::size_t bytes);

  // How many buffers are kept for reuse. For tests.
  std::size_t kept() const;

 private:
  const std::size_t kept_;
  const std::size_t largest_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
};

}  // namespace rulestream
