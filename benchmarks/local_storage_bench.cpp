// Whole-file reads through LocalStorage, copied with pread against mapped, each followed by one
// pass over every byte as the decoder makes (a lazily mapped file pays for its page faults
// there). Files are in the page cache, written just before: the watch case, and replay after
// the first run. This sets LocalStorage::kDefaultMapThreshold.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "sources/local/local_storage.hpp"

namespace {

using rulestream::LocalStorage;
using rulestream::SharedBytes;

constexpr std::int64_t kSizesKiB[] = {4, 64, 1024, 4096, 16384, 65536};

// A folder holding one file per size under test, removed at exit.
class BenchFiles {
 public:
  BenchFiles()
      : dir_(std::filesystem::temp_directory_path() /
             ("rulestream-storage-bench-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    for (const std::int64_t kib : kSizesKiB) {
      std::string content(static_cast<std::size_t>(kib) * 1024, '\0');
      for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 131);
      std::ofstream(dir_ / name(kib), std::ios::binary)
          .write(content.data(), static_cast<std::streamsize>(content.size()));
    }
  }
  ~BenchFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  BenchFiles(const BenchFiles&) = delete;
  BenchFiles& operator=(const BenchFiles&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  static std::string name(std::int64_t kib) { return std::to_string(kib) + ".bin"; }

 private:
  std::filesystem::path dir_;
};

const BenchFiles& files() {
  static const BenchFiles instance;
  return instance;
}

std::uint64_t touch(const SharedBytes& bytes) {
  std::uint64_t sum = 0;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    sum += word;
  }
  for (; i < bytes.size(); ++i) sum += static_cast<std::uint64_t>(bytes.data()[i]);
  return sum;
}

void read_whole_file(benchmark::State& state, std::uint64_t map_threshold) {
  const LocalStorage storage(files().dir(), map_threshold);
  const std::string name = BenchFiles::name(state.range(0));
  for (auto _ : state) {
    const SharedBytes bytes = storage.read(name);
    benchmark::DoNotOptimize(touch(bytes));
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 1024);
}

void BM_ReadCopied(benchmark::State& state) {
  read_whole_file(state, LocalStorage::kNeverMap);
}
void BM_ReadMapped(benchmark::State& state) {
  read_whole_file(state, 1);
}
void BM_ReadDefault(benchmark::State& state) {
  read_whole_file(state, LocalStorage::kDefaultMapThreshold);
}

void sizes(benchmark::internal::Benchmark* benchmark) {
  for (const std::int64_t kib : kSizesKiB) benchmark->Arg(kib);
}

BENCHMARK(BM_ReadCopied)->Apply(sizes);
BENCHMARK(BM_ReadMapped)->Apply(sizes);
BENCHMARK(BM_ReadDefault)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
