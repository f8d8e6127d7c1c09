// compute_reductions throughput: the hot loop of every step that reads raw tensors.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/model/half.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/reduce/reductions.hpp"

namespace rulestream {
namespace {

// Element bytes at `offset` past a 64-byte boundary: offset 1 mimics tensor content that sits
// unaligned inside a protobuf record.
template <typename T>
TensorValue make_tensor(DType dtype, const std::vector<T>& values, std::size_t offset) {
  const std::size_t size = values.size() * sizeof(T);
  auto buffer = std::shared_ptr<std::byte[]>(new std::byte[size + 64 + offset]);
  auto address = reinterpret_cast<std::uintptr_t>(buffer.get());
  const std::size_t start = (64 - address % 64) % 64 + offset;
  if (size != 0) std::memcpy(buffer.get() + start, values.data(), size);
  SharedBytes bytes(std::shared_ptr<const void>(buffer, buffer.get()),
                    std::span<const std::byte>(buffer.get() + start, size));
  return TensorValue(dtype, Shape{static_cast<std::int64_t>(values.size())}, std::move(bytes));
}

std::vector<float> random_floats(std::size_t count) {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> values(count);
  for (auto& value : values) value = normal(rng);
  return values;
}

void run(benchmark::State& state, const TensorValue& tensor) {
  for (auto _ : state) {
    auto reductions = compute_reductions(tensor);
    benchmark::DoNotOptimize(reductions);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(tensor.bytes().size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * tensor.size());
}

void BM_Float32(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto offset = static_cast<std::size_t>(state.range(1));
  run(state, make_tensor(DType::Float32, random_floats(count), offset));
}
BENCHMARK(BM_Float32)
    ->ArgNames({"elements", "misalign"})
    ->ArgsProduct({{256, 4096, 65536, 1 << 20}, {0, 1}});

void BM_Float16(benchmark::State& state) {
  const auto floats = random_floats(static_cast<std::size_t>(state.range(0)));
  std::vector<std::uint16_t> halves(floats.size());
  for (std::size_t i = 0; i < floats.size(); ++i) halves[i] = float_to_float16(floats[i]);
  run(state, make_tensor(DType::Float16, halves, static_cast<std::size_t>(state.range(1))));
}
BENCHMARK(BM_Float16)->ArgNames({"elements", "misalign"})->Args({65536, 0})->Args({65536, 1});

void BM_Int32(benchmark::State& state) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int32_t> uniform(-1000, 1000);
  std::vector<std::int32_t> values(static_cast<std::size_t>(state.range(0)));
  for (auto& value : values) value = uniform(rng);
  run(state, make_tensor(DType::Int32, values, static_cast<std::size_t>(state.range(1))));
}
BENCHMARK(BM_Int32)->ArgNames({"elements", "misalign"})->Args({65536, 0})->Args({65536, 1});

}  // namespace
}  // namespace rulestream

BENCHMARK_MAIN();
