#include "stages/load/record_batches.hpp"

#include <algorithm>
#include <stdexcept>

namespace rulestream {

std::vector<RecordBatch> plan_record_batches(std::span<const RecordSpan> records,
                                             BatchLimits limits) {
  std::vector<RecordBatch> batches;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const RecordSpan& record = records[i];
    if (i > 0 && record.start < records[i - 1].start) {
      throw std::invalid_argument("plan_record_batches: records are not sorted by start");
    }
    const std::uint64_t end = record.start + record.length;
    if (!batches.empty()) {
      RecordBatch& batch = batches.back();
      const bool near = record.start <= batch.end || record.start - batch.end <= limits.max_gap;
      const std::uint64_t grown_end = std::max(batch.end, end);
      if (near && grown_end - batch.start <= limits.max_bytes) {
        batch.end = grown_end;
        batch.last = i + 1;
        continue;
      }
    }
    batches.push_back({record.start, end, i, i + 1});
  }
  return batches;
}

namespace {

// The thread's kept buffer, and whether a BatchBuffer on this thread holds it now (a thread
// that waits inside a batch may be handed another one by the scheduler).
struct KeptBuffer {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t capacity = 0;
  bool in_use = false;
};

KeptBuffer& kept_buffer() {
  thread_local KeptBuffer kept;
  return kept;
}

}  // namespace

BatchBuffer::BatchBuffer(std::size_t size) : size_(size) {
  KeptBuffer& kept = kept_buffer();
  if (size <= kKeptBytes && !kept.in_use) {
    if (kept.capacity < size) {
      // Grown to the size asked for, not to kKeptBytes: a thread that only ever reads small
      // batches keeps a small buffer.
      kept.bytes = std::make_unique_for_overwrite<std::byte[]>(size);
      kept.capacity = size;
    }
    kept.in_use = true;
    data_ = kept.bytes.get();
    reused_ = true;
    return;
  }
  own_ = std::make_unique_for_overwrite<std::byte[]>(size);
  data_ = own_.get();
}

BatchBuffer::~BatchBuffer() {
  if (reused_) kept_buffer().in_use = false;
}

}  // namespace rulestream
