// Threads cutting slices of one file's bytes at once, as rules reading the same step's values do
// (TrialStore::read_records: each value's record, its payload and its tensor's content are each a
// slice, taken and let go). Every slice takes a reference on its owner and gives it back: slicing
// the file's mapping itself, every thread writes the mapping's one counter; slicing a copy
// counted apart (SharedBytes::counted_apart, one per thread's batch, as read_records makes
// them), each thread writes its own. Per iteration: one value's three slices, cut and dropped.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "core/model/shared_bytes.hpp"

namespace {

using rulestream::SharedBytes;

constexpr std::size_t kFileBytes = 4 << 20;
constexpr std::size_t kRecordBytes = 1'100;  // a record of 256 floats, framed

// One file's bytes, kept as a mapping is, shared by every thread of a run.
const SharedBytes& file_bytes() {
  static const SharedBytes whole = [] {
    auto buffer = std::make_shared<const std::vector<std::byte>>(kFileBytes, std::byte{1});
    const std::span<const std::byte> view(buffer->data(), buffer->size());
    return SharedBytes::of_kept_mapping(std::move(buffer), view);
  }();
  return whole;
}

// A value's way from the batch it was read in: its record, the record's payload, the content.
void cut_value(const SharedBytes& batch, std::size_t at) {
  const SharedBytes record = batch.slice(at, kRecordBytes);
  const SharedBytes payload = record.slice(12, kRecordBytes - 16);
  const SharedBytes content = payload.slice(40, 1'024);
  benchmark::DoNotOptimize(content.data());
}

void slice_values(benchmark::State& state, bool counted_apart) {
  const SharedBytes& file = file_bytes();
  // Threads read different records of the same file, as ranges of one step's tensors do.
  const std::size_t records = kFileBytes / kRecordBytes;
  std::size_t at = static_cast<std::size_t>(state.thread_index()) * 97 % records;
  const SharedBytes batch = counted_apart ? file.counted_apart() : file;
  for (auto _ : state) {
    cut_value(batch, at * kRecordBytes);
    at = at + 1 == records ? 0 : at + 1;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SliceTheFilesBytes(benchmark::State& state) {
  slice_values(state, false);
}
void BM_SliceACopyCountedApart(benchmark::State& state) {
  slice_values(state, true);
}

BENCHMARK(BM_SliceTheFilesBytes)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(BM_SliceACopyCountedApart)->ThreadRange(1, 16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
