// Event decoding costs: our zero-copy wire walk (decode_event) against parsing the same payload
// into protobuf's generated classes (which copies tensor_content into a std::string and then
// still has to become a TensorValue), for the record sizes smdebug writes: a 0-d reduction, a
// small weight matrix and a large activation.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/shared_bytes.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/format/event_codec.hpp"
#include "stages/format/proto/event.pb.h"

namespace rulestream {
namespace {

SharedBytes float_record(std::int64_t elements) {
  std::vector<float> values(static_cast<std::size_t>(elements));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  const Shape shape = elements == 1 ? Shape{} : Shape{elements};
  const auto value = TensorValue::from_values(DType::Float32, shape, values);
  return SharedBytes::from_string(
      encode_tensor_event("gradient/MLP_fc1.weight", value, 1234, Mode::Train, 1000, 1700000000.0));
}

void BM_DecodeEvent(benchmark::State& state) {
  const SharedBytes payload = float_record(state.range(0));
  for (auto _ : state) {
    auto tensors = decode_event(payload, "bench.tfevents");
    benchmark::DoNotOptimize(tensors.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(payload.size()));
  state.SetItemsProcessed(state.iterations());
}

void BM_GeneratedParse(benchmark::State& state) {
  const SharedBytes payload = float_record(state.range(0));
  for (auto _ : state) {
    tfproto::Event event;
    event.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
    benchmark::DoNotOptimize(event.summary().value(0).tensor().tensor_content().data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(payload.size()));
  state.SetItemsProcessed(state.iterations());
}

void BM_EncodeTensorEvent(benchmark::State& state) {
  std::vector<float> values(static_cast<std::size_t>(state.range(0)), 1.0f);
  const auto value = TensorValue::from_values(DType::Float32, {state.range(0)}, values);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto payload = encode_tensor_event("relu1_output_0", value, 7, Mode::Eval, 3, 1.0);
    bytes = payload.size();
    benchmark::DoNotOptimize(payload.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

// 1 element: a saved reduction; 640: MLP_fc1.weight; 256 Ki: a large activation (1 MiB).
BENCHMARK(BM_DecodeEvent)->ArgName("elements")->Arg(1)->Arg(640)->Arg(256 << 10);
BENCHMARK(BM_GeneratedParse)->ArgName("elements")->Arg(1)->Arg(640)->Arg(256 << 10);
BENCHMARK(BM_EncodeTensorEvent)->ArgName("elements")->Arg(640)->Arg(256 << 10);

}  // namespace
}  // namespace rulestream

BENCHMARK_MAIN();
