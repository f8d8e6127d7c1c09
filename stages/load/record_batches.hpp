#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace rulestream {

// Records of one event file grouped for reading a batch at a time into a buffer that stays in
// the core's cache while its records are decoded and reduced. Reading a whole large file
// instead (or mapping it) sends every byte through memory once more and, for a mapping, pays a
// page fault per 16 pages, which on a virtual machine cost more than the copy itself
// (benchmarks/RESULTS.md, "Reading event files in batches").
struct RecordBatch {
  std::uint64_t start = 0;  // file offset of the first byte read
  std::uint64_t end = 0;    // one past the last byte read
  std::size_t first = 0;    // the records read, as positions in the planned list
  std::size_t last = 0;     // one past
};

struct BatchLimits {
  // A batch grows while it stays within this many bytes; a record longer than that is a batch
  // of its own. Half of a 512 KiB L2 leaves room for what decoding and the rules touch.
  std::uint64_t max_bytes = 256 * 1024;
  // Records further apart than this start a new batch: reading the bytes between them would
  // cost more than the call it saves.
  std::uint64_t max_gap = 4 * 1024;
};

// A record's place in its file.
struct RecordSpan {
  std::uint64_t start = 0;
  std::uint64_t length = 0;
};

// Batches covering `records`, which must be sorted by start (throws std::invalid_argument
// otherwise). Overlapping records (a corrupt index) are fine: each is read whole.
std::vector<RecordBatch> plan_record_batches(std::span<const RecordSpan> records,
                                             BatchLimits limits = {});

// The bytes a batch is read into: the calling thread's reused buffer when it is large enough
// to keep and not already in use on this thread, else an allocation of its own. Reuse keeps
// the buffer's lines in cache from one batch to the next and spares an allocation per batch.
class BatchBuffer {
 public:
  // The largest buffer a thread keeps between batches.
  static constexpr std::size_t kKeptBytes = std::size_t{1} << 20;

  explicit BatchBuffer(std::size_t size);
  ~BatchBuffer();
  BatchBuffer(const BatchBuffer&) = delete;
  BatchBuffer& operator=(const BatchBuffer&) = delete;

  std::span<std::byte> span() const { return {data_, size_}; }
  // Whether this buffer is the thread's reused one (for tests).
  bool reused() const { return reused_; }

 private:
  std::unique_ptr<std::byte[]> own_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool reused_ = false;
};

}  // namespace rulestream
