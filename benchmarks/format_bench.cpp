// Format-layer costs: CRC32C on the SSE4.2 instruction against the portable table, scan_records
// over files of large and small records with and without payload CRC checks, and index files read
// through a Boost.JSON document against the parser-event (SAX) reader.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/model/shared_bytes.hpp"
#include "stages/format/crc32c.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/index_file_sax.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "stages/format/tfrecord_writer.hpp"

namespace rulestream {
namespace {

std::vector<std::byte> random_bytes(std::size_t size) {
  std::mt19937_64 random(42);
  std::vector<std::byte> bytes(size);
  for (std::byte& b : bytes) b = static_cast<std::byte>(random());
  return bytes;
}

void BM_Crc32cHardware(benchmark::State& state) {
  if (!crc32c_hardware_available()) {
    state.SkipWithError("no SSE4.2 on this CPU");
    return;
  }
  const std::vector<std::byte> data = random_bytes(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(crc32c(data));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32cHardware)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

void BM_Crc32cPortable(benchmark::State& state) {
  const std::vector<std::byte> data = random_bytes(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(crc32c_portable(data));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32cPortable)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

// A 16 MiB file of records of range(0) bytes; range(1): footers are real payload CRCs (1) or
// smdebug's placeholder (0); range(2): check_data_crc.
void BM_ScanRecords(benchmark::State& state) {
  constexpr std::size_t kFileBytes = 16 << 20;
  const auto record_size = static_cast<std::size_t>(state.range(0));
  const FooterStyle footer =
      state.range(1) != 0 ? FooterStyle::PayloadCrc : FooterStyle::SmdebugPlaceholder;
  const FramingOptions options{.check_data_crc = state.range(2) != 0};

  const std::vector<std::byte> payload = random_bytes(record_size);
  std::string stream;
  while (stream.size() + record_size < kFileBytes) append_record(stream, payload, footer);
  const SharedBytes file = SharedBytes::from_string(std::move(stream));

  std::size_t records = 0;
  for (auto _ : state) {
    const RecordScan scan = scan_records(file, 0, "bench.tfevents", options);
    records = scan.records.size();
    benchmark::DoNotOptimize(scan.records.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(file.size()));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(records));
  state.SetLabel(std::string(footer == FooterStyle::PayloadCrc ? "payload-crc footers"
                                                               : "placeholder footers") +
                 (options.check_data_crc ? ", checked" : ", unchecked"));
}
BENCHMARK(BM_ScanRecords)
    ->ArgNames({"record_bytes", "crc_footer", "check"})
    ->Args({256 << 10, 1, 1})
    ->Args({256 << 10, 1, 0})
    ->Args({256 << 10, 0, 1})
    ->Args({1 << 10, 1, 1})
    ->Args({1 << 10, 1, 0})
    ->Args({1 << 10, 0, 1});

// An index file as smdebug writes it for a step of `tensors` tensors: parameters, gradients and
// their saved reductions, with a shape payload for one tensor in five.
std::string realistic_index_file(std::size_t tensors) {
  static const std::vector<std::string> kPrefixes = {"", "gradient/", "smdebug/reductions/min/",
                                                     "smdebug/reductions/abs_mean/gradient/"};
  IndexFile index;
  index.mode = Mode::Train;
  index.mode_step = 1234;
  index.event_file_name = "events/000000001234/000000001234_worker_0.tfevents";
  index.shapes.emplace();
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < tensors; ++i) {
    const std::string layer = "ResNet_layer" + std::to_string(i / 8) + ".conv" +
                              std::to_string(i % 3) + (i % 2 == 0 ? ".weight" : ".bias");
    const std::uint64_t length = 109 + (i * 37) % 4000;
    index.tensors.push_back({kPrefixes[i % kPrefixes.size()] + layer, offset, length});
    offset += length;
    if (i % 5 == 0) index.shapes->push_back({layer, layer, {64, 3, 3, 3}});
  }
  return serialize_index_file(index);
}

// range(0): tensors in the file; range(1): 0 reads through a Boost.JSON document
// (parse_index_file_document), 1 off parser events (parse_index_file_fast).
void BM_ParseIndexFile(benchmark::State& state) {
  const std::string text = realistic_index_file(static_cast<std::size_t>(state.range(0)));
  const bool fast = state.range(1) != 0;
  const std::string path = "bench/index/000000001/000000001234_worker_0.json";
  for (auto _ : state) {
    if (fast) {
      std::optional<IndexFile> index = parse_index_file_fast(text);
      if (!index) state.SkipWithError("the fast reader declined the file");
      benchmark::DoNotOptimize(index);
    } else {
      IndexFile index = parse_index_file_document(text, path);
      benchmark::DoNotOptimize(index);
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetLabel(fast ? "sax" : "document");
}
BENCHMARK(BM_ParseIndexFile)
    ->ArgNames({"tensors", "sax"})
    ->Args({20, 0})
    ->Args({20, 1})
    ->Args({500, 0})
    ->Args({500, 1})
    ->Args({2000, 0})
    ->Args({2000, 1});

}  // namespace
}  // namespace rulestream

BENCHMARK_MAIN();
