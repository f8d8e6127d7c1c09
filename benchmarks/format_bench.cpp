// TFRecord framing costs: CRC32C on the SSE4.2 instruction against the portable table, and
// scan_records over files of large and small records with and without payload CRC checks.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pipeline/shared_bytes.hpp"
#include "stages/crc32c.hpp"
#include "stages/tfrecord_reader.hpp"
#include "stages/tfrecord_writer.hpp"

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

}  // namespace
}  // namespace rulestream

BENCHMARK_MAIN();
