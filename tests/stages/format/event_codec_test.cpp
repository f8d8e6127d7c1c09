#include "stages/format/event_codec.hpp"

#include <gmock/gmock.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <span>

#include "core/model/exceptions.hpp"
#include "stages/format/proto/event.pb.h"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace tfproto = rulestream::tfproto;

const std::string kWhere = "events/000000000007/000000000007_worker_0.tfevents@1234";

// Fields the generated class does not know, written out as they are on serialisation.
google::protobuf::UnknownFieldSet& unknown_fields(google::protobuf::Message& message) {
  return *message.GetReflection()->MutableUnknownFields(&message);
}

SharedBytes bytes_of(const std::string& text) {
  return SharedBytes::from_string(text);
}

SharedBytes serialize(const tfproto::Event& event) {
  std::string out;
  EXPECT_TRUE(event.SerializeToString(&out));
  return bytes_of(out);
}

// An Event holding one Summary.Value with a tensor the test fills in.
tfproto::Event event_with_tensor(const std::string& tag, std::int64_t step = 3) {
  tfproto::Event event;
  event.set_wall_time(1700000000.25);
  event.set_step(step);
  event.mutable_summary()->add_value()->set_tag(tag);
  return event;
}

tfproto::TensorProto& tensor_of(tfproto::Event& event) {
  return *event.mutable_summary()->mutable_value(0)->mutable_tensor();
}

void set_shape(tfproto::TensorProto& tensor, const Shape& shape) {
  auto* proto_shape = tensor.mutable_tensor_shape();
  for (const auto size : shape) proto_shape->add_dim()->set_size(size);
}

DecodedTensor decode_one(const SharedBytes& payload) {
  auto decoded = decode_event(payload, kWhere);
  EXPECT_EQ(decoded.size(), 1u);
  if (decoded.empty()) throw std::runtime_error("no tensor decoded");
  return decoded.front();
}

// Runs `action`, expects a FormatError whose where() is kWhere and whose message contains
// every one of `fragments`.
void expect_format_error(const std::function<void()>& action,
                         const std::vector<std::string>& fragments) {
  try {
    action();
    ADD_FAILURE() << "no FormatError thrown";
  } catch (const FormatError& error) {
    EXPECT_EQ(error.where(), kWhere);
    EXPECT_THAT(error.what(), HasSubstr(kWhere));
    for (const auto& fragment : fragments) EXPECT_THAT(error.what(), HasSubstr(fragment));
  }
}

template <typename T>
TensorValue values(DType dtype, Shape shape, std::vector<T> elements) {
  return TensorValue::from_values(dtype, std::move(shape), elements);
}

template <typename T>
TensorValue raw(DType dtype, Shape shape, std::vector<T> numbers) {
  return TensorValue(dtype, std::move(shape),
                     SharedBytes::copy_of(std::as_bytes(std::span(numbers))));
}

// One numeric tensor of every dtype, with values that exercise signs, extremes and NaN bits.
std::vector<std::pair<std::string, TensorValue>> every_numeric_dtype() {
  using L8 = std::numeric_limits<std::int8_t>;
  using L16 = std::numeric_limits<std::int16_t>;
  using L32 = std::numeric_limits<std::int32_t>;
  using L64 = std::numeric_limits<std::int64_t>;
  return {
      {"float16", values<std::uint16_t>(DType::Float16, {3}, {0x3c00, 0xc000, 0x7e00})},
      {"bfloat16", values<std::uint16_t>(DType::BFloat16, {3}, {0x3f80, 0xc040, 0x7fc0})},
      {"float32", values<float>(DType::Float32, {2, 2}, {1.5f, -0.0f, 3e38f, 1e-45f})},
      {"float64", values<double>(DType::Float64, {3}, {1e308, -2.5, 4.9e-324})},
      {"int8", values<std::int8_t>(DType::Int8, {3}, {L8::min(), -11, L8::max()})},
      {"int16", values<std::int16_t>(DType::Int16, {3}, {L16::min(), 7, L16::max()})},
      {"int32", values<std::int32_t>(DType::Int32, {3}, {L32::min(), -1, L32::max()})},
      {"int64", values<std::int64_t>(DType::Int64, {3}, {L64::min(), 3, L64::max()})},
      {"uint8", values<std::uint8_t>(DType::UInt8, {3}, {0, 200, 255})},
      {"uint16", values<std::uint16_t>(DType::UInt16, {3}, {0, 40000, 65535})},
      {"uint32", values<std::uint32_t>(DType::UInt32, {3}, {0, 3000000000u, 4294967295u})},
      {"uint64", values<std::uint64_t>(DType::UInt64, {3}, {0, 1ull << 63, ~0ull})},
      {"bool", values<std::uint8_t>(DType::Bool, {3}, {1, 0, 1})},
      {"complex64",
       values<std::uint64_t>(DType::Complex64, {2},
                             {std::bit_cast<std::uint64_t>(std::complex<float>(1, 2)),
                              std::bit_cast<std::uint64_t>(std::complex<float>(-3, 0.5f))})},
      {"complex128", raw<double>(DType::Complex128, {2}, {1, -2, 3.5, 4})},
      {"float32_4d", values<float>(DType::Float32, {1, 2, 1, 2}, {1, 2, 3, 4})},
      {"float32_0d", values<float>(DType::Float32, {}, {42.0f})},
  };
}

// --- tensor_content: what smdebug writes ---------------------------------------------------

TEST(EventCodec, EveryNumericDtypeRoundTripsThroughTensorContent) {
  for (const auto& [label, value] : every_numeric_dtype()) {
    SCOPED_TRACE(label);
    const auto payload =
        bytes_of(encode_tensor_event("t/" + label, value, 17, Mode::Eval, 4, 1700000000.5));
    const auto decoded = decode_one(payload);
    EXPECT_EQ(decoded.name, "t/" + label);
    EXPECT_EQ(decoded.step, 17);
    EXPECT_EQ(decoded.wall_time, 1700000000.5);
    EXPECT_EQ(decoded.mode, Mode::Eval);
    EXPECT_EQ(decoded.mode_step, 4);
    EXPECT_TRUE(decoded.value.identical_to(value)) << dtype_name(decoded.value.dtype());
  }
}

TEST(EventCodec, TensorContentIsNotCopied) {
  const auto value = values<float>(DType::Float32, {4}, {1, 2, 3, 4});
  const auto payload = bytes_of(encode_tensor_event("w", value, 0, Mode::Train, 0, 1.0));
  const auto decoded = decode_one(payload);
  const std::byte* begin = payload.data();
  const std::byte* end = payload.data() + payload.size();
  EXPECT_GE(decoded.value.bytes().data(), begin);
  EXPECT_LE(decoded.value.bytes().data() + decoded.value.bytes().size(), end);
  // The slice also keeps the payload alive on its own.
  SharedBytes kept = decoded.value.bytes();
  EXPECT_EQ(std::memcmp(kept.data(), value.bytes().data(), 16), 0);
}

TEST(EventCodec, EncodesWhatSmdebugWritesField) {
  // Field by field, the layout FORMAT.md documents for a raw float32 record.
  const auto value = values<float>(DType::Float32, {2}, {1, 2});
  const std::string bytes = encode_tensor_event("MLP_fc1.bias", value, 5, Mode::Train, 1, 2.0);
  tfproto::Event event;
  ASSERT_TRUE(event.ParseFromString(bytes));
  EXPECT_EQ(event.step(), 5);
  ASSERT_EQ(event.summary().value_size(), 1);
  const auto& summary_value = event.summary().value(0);
  EXPECT_EQ(summary_value.tag(), "MLP_fc1.bias");
  EXPECT_EQ(summary_value.tensor().dtype(), tfproto::DT_FLOAT);
  ASSERT_EQ(summary_value.tensor().tensor_shape().dim_size(), 1);
  EXPECT_EQ(summary_value.tensor().tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(summary_value.tensor().tensor_shape().dim(0).name(), "MLP_fc1.bias_2");
  EXPECT_EQ(summary_value.tensor().tensor_content().size(), 8u);
  const auto& plugins = summary_value.metadata().plugin_data();
  ASSERT_EQ(plugins.size(), 2);
  EXPECT_EQ(plugins[0].plugin_name(), "mode_step");
  EXPECT_EQ(plugins[0].content(), "1");
  EXPECT_EQ(plugins[1].plugin_name(), "mode");
  EXPECT_EQ(plugins[1].content(), "1");
}

TEST(EventCodec, StepZeroIsOmittedAndDecodesAsZero) {
  const auto value = values<float>(DType::Float32, {}, {1});
  const std::string bytes = encode_tensor_event("x", value, 0, Mode::Train, 0, 3.0);
  // wall_time (09 + 8 bytes) is followed directly by the summary (2a).
  ASSERT_GT(bytes.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[9]), 0x2a);
  EXPECT_EQ(decode_one(bytes_of(bytes)).step, 0);
}

TEST(EventCodec, ZeroDimensionalTensorKeepsAnEmptyShape) {
  const auto value = values<float>(DType::Float32, {}, {7.5f});
  const std::string bytes = encode_tensor_event("loss", value, 2, Mode::Train, 2, 1.0);
  EXPECT_NE(bytes.find(std::string("\x08\x01\x12\x00\x22\x04", 6)), std::string::npos);
  const auto decoded = decode_one(bytes_of(bytes));
  EXPECT_TRUE(decoded.value.shape().empty());
  EXPECT_EQ(decoded.value.size(), 1);
  EXPECT_EQ(decoded.value.as_double(0), 7.5);
}

TEST(EventCodec, StringsAreWrittenAsStringValWithoutDtype) {
  const TensorValue value(Shape{3}, std::vector<std::string>{"a", "bc", std::string("\0z", 2)});
  const std::string bytes = encode_tensor_event("dt_strings", value, 0, Mode::Predict, 9, 1.0);
  tfproto::Event event;
  ASSERT_TRUE(event.ParseFromString(bytes));
  const auto& tensor = event.summary().value(0).tensor();
  EXPECT_EQ(tensor.dtype(), tfproto::DT_INVALID);
  EXPECT_TRUE(tensor.tensor_content().empty());
  ASSERT_EQ(tensor.string_val_size(), 3);
  EXPECT_EQ(tensor.tensor_shape().dim(0).name(), "dt_strings_3");

  const auto decoded = decode_one(bytes_of(bytes));
  EXPECT_TRUE(decoded.value.is_string());
  EXPECT_TRUE(decoded.value.identical_to(value));
  EXPECT_EQ(decoded.mode, Mode::Predict);
  EXPECT_EQ(decoded.mode_step, 9);
}

TEST(EventCodec, DtStringIsReadAsStringsToo) {
  auto event = event_with_tensor("s");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_STRING);
  set_shape(tensor, {2});
  tensor.add_string_val("x");
  tensor.add_string_val("yz");
  const auto decoded = decode_one(serialize(event));
  ASSERT_TRUE(decoded.value.is_string());
  EXPECT_THAT(decoded.value.strings(), ElementsAre("x", "yz"));
}

// --- typed fields: what TensorFlow's writers use for small tensors -------------------------

enum class Encoding { Packed, Unpacked };

// Adds the first `numbers` of a typed field's numbers to a TensorProto: packed through the
// generated adders, unpacked (one tag per number, as proto2-era writers do) through unknown
// fields, which the generated serializer writes out as they are.
using TypedAdder = std::function<void(tfproto::TensorProto&, Encoding, std::size_t numbers)>;

struct TypedCase {
  std::string label;
  tfproto::DataType tf_dtype;
  TensorValue expected;     // shape [3]
  std::size_t per_element;  // 2 for complex (real, imaginary)
  TypedAdder add_values;
};

template <typename T>
TypedAdder adder(int field, std::vector<T> numbers,
                 std::function<void(tfproto::TensorProto&, T)> add_packed) {
  return [=](tfproto::TensorProto& tensor, Encoding encoding, std::size_t count) {
    for (std::size_t i = 0; i < count && i < numbers.size(); ++i) {
      const T number = numbers[i];
      if (encoding == Encoding::Packed) {
        add_packed(tensor, number);
        continue;
      }
      auto* unknown = &unknown_fields(tensor);
      if constexpr (std::is_same_v<T, float>) {
        unknown->AddFixed32(field, std::bit_cast<std::uint32_t>(number));
      } else if constexpr (std::is_same_v<T, double>) {
        unknown->AddFixed64(field, std::bit_cast<std::uint64_t>(number));
      } else if constexpr (std::is_signed_v<T>) {
        // int32/int64 varints are sign-extended to 64 bits.
        unknown->AddVarint(field, static_cast<std::uint64_t>(static_cast<std::int64_t>(number)));
      } else {
        unknown->AddVarint(field, static_cast<std::uint64_t>(number));
      }
    }
  };
}

std::vector<TypedCase> typed_cases() {
  using TP = tfproto::TensorProto;
  using I32 = std::int32_t;
  constexpr auto kMinI32 = std::numeric_limits<std::int32_t>::min();
  constexpr auto kMinI64 = std::numeric_limits<std::int64_t>::min();
  return {
      {"float32", tfproto::DT_FLOAT, raw<float>(DType::Float32, {3}, {1.5f, -2.0f, 1e30f}), 1,
       adder<float>(5, {1.5f, -2.0f, 1e30f}, [](TP& t, float v) { t.add_float_val(v); })},
      {"float64", tfproto::DT_DOUBLE, raw<double>(DType::Float64, {3}, {0.1, -1e300, 2}), 1,
       adder<double>(6, {0.1, -1e300, 2}, [](TP& t, double v) { t.add_double_val(v); })},
      {"int8", tfproto::DT_INT8, raw<std::int8_t>(DType::Int8, {3}, {-11, -128, 127}), 1,
       adder<I32>(7, {-11, -128, 127}, [](TP& t, I32 v) { t.add_int_val(v); })},
      {"int16", tfproto::DT_INT16, raw<std::int16_t>(DType::Int16, {3}, {5, -32768, 32767}), 1,
       adder<I32>(7, {5, -32768, 32767}, [](TP& t, I32 v) { t.add_int_val(v); })},
      {"int32", tfproto::DT_INT32, raw<I32>(DType::Int32, {3}, {kMinI32, -1, 9}), 1,
       adder<I32>(7, {kMinI32, -1, 9}, [](TP& t, I32 v) { t.add_int_val(v); })},
      {"uint8", tfproto::DT_UINT8, raw<std::uint8_t>(DType::UInt8, {3}, {128, 0, 255}), 1,
       adder<I32>(7, {128, 0, 255}, [](TP& t, I32 v) { t.add_int_val(v); })},
      {"uint16", tfproto::DT_UINT16, raw<std::uint16_t>(DType::UInt16, {3}, {40000, 0, 65535}), 1,
       adder<I32>(7, {40000, 0, 65535}, [](TP& t, I32 v) { t.add_int_val(v); })},
      {"int64", tfproto::DT_INT64, raw<std::int64_t>(DType::Int64, {3}, {kMinI64, 0, 77}), 1,
       adder<std::int64_t>(10, {kMinI64, 0, 77},
                           [](TP& t, std::int64_t v) { t.add_int64_val(v); })},
      {"uint32", tfproto::DT_UINT32, raw<std::uint32_t>(DType::UInt32, {3}, {4294967295u, 0, 1}), 1,
       adder<std::uint32_t>(16, {4294967295u, 0, 1},
                            [](TP& t, std::uint32_t v) { t.add_uint32_val(v); })},
      {"uint64", tfproto::DT_UINT64, raw<std::uint64_t>(DType::UInt64, {3}, {~0ull, 0, 2}), 1,
       adder<std::uint64_t>(17, {~0ull, 0, 2},
                            [](TP& t, std::uint64_t v) { t.add_uint64_val(v); })},
      {"bool", tfproto::DT_BOOL, raw<std::uint8_t>(DType::Bool, {3}, {1, 0, 1}), 1,
       adder<std::uint32_t>(11, {1, 0, 1}, [](TP& t, std::uint32_t v) { t.add_bool_val(v != 0); })},
      {"float16", tfproto::DT_HALF,
       raw<std::uint16_t>(DType::Float16, {3}, {0xfbff, 0x3c00, 0x0001}), 1,
       adder<I32>(13, {0xfbff, 0x3c00, 0x0001}, [](TP& t, I32 v) { t.add_half_val(v); })},
      {"bfloat16", tfproto::DT_BFLOAT16,
       raw<std::uint16_t>(DType::BFloat16, {3}, {0x3f80, 0xbf80, 0x7f80}), 1,
       adder<I32>(13, {0x3f80, 0xbf80, 0x7f80}, [](TP& t, I32 v) { t.add_half_val(v); })},
      {"complex64", tfproto::DT_COMPLEX64, raw<float>(DType::Complex64, {3}, {1, 2, 3, 4, 5, 6}), 2,
       adder<float>(9, {1, 2, 3, 4, 5, 6}, [](TP& t, float v) { t.add_scomplex_val(v); })},
      {"complex128", tfproto::DT_COMPLEX128,
       raw<double>(DType::Complex128, {3}, {1, -2, 3, -4, 5, -6}), 2,
       adder<double>(12, {1, -2, 3, -4, 5, -6}, [](TP& t, double v) { t.add_dcomplex_val(v); })},
  };
}

class TypedFields : public ::testing::TestWithParam<Encoding> {};

TEST_P(TypedFields, EveryDtypeDecodes) {
  for (const auto& typed : typed_cases()) {
    SCOPED_TRACE(typed.label);
    auto event = event_with_tensor("typed/" + typed.label);
    auto& tensor = tensor_of(event);
    tensor.set_dtype(typed.tf_dtype);
    set_shape(tensor, {3});
    typed.add_values(tensor, GetParam(), 3 * typed.per_element);
    const auto decoded = decode_one(serialize(event));
    EXPECT_EQ(decoded.name, "typed/" + typed.label);
    EXPECT_EQ(decoded.step, 3);
    EXPECT_TRUE(decoded.value.identical_to(typed.expected))
        << "got " << dtype_name(decoded.value.dtype()) << ", " << decoded.value.bytes().size()
        << " bytes";
  }
}

TEST_P(TypedFields, SingleValueIsBroadcastToTheShape) {
  for (const auto& typed : typed_cases()) {
    SCOPED_TRACE(typed.label);
    auto event = event_with_tensor("b");
    auto& tensor = tensor_of(event);
    tensor.set_dtype(typed.tf_dtype);
    set_shape(tensor, {2, 3});
    typed.add_values(tensor, GetParam(), typed.per_element);
    const auto decoded = decode_one(serialize(event));

    const std::size_t element_size = dtype_size(typed.expected.dtype());
    std::vector<std::byte> expected;
    for (int i = 0; i < 6; ++i) {
      expected.insert(expected.end(), typed.expected.bytes().data(),
                      typed.expected.bytes().data() + element_size);
    }
    const TensorValue broadcast(typed.expected.dtype(), {2, 3},
                                SharedBytes::from_vector(std::move(expected)));
    EXPECT_TRUE(decoded.value.identical_to(broadcast));
  }
}

TEST_P(TypedFields, WrongCountIsAFormatError) {
  for (const auto& typed : typed_cases()) {
    SCOPED_TRACE(typed.label);
    auto event = event_with_tensor("miscounted");
    auto& tensor = tensor_of(event);
    tensor.set_dtype(typed.tf_dtype);
    set_shape(tensor, {4});
    typed.add_values(tensor, GetParam(), 2 * typed.per_element);
    const auto payload = serialize(event);
    expect_format_error([&] { decode_event(payload, kWhere); }, {"'miscounted'", "for 4 elements"});
  }
}

TEST(EventCodec, TypedTensorWithoutValuesIsAFormatError) {
  auto event = event_with_tensor("empty_typed");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_FLOAT);
  set_shape(tensor, {3});
  const auto payload = serialize(event);
  expect_format_error([&] { decode_event(payload, kWhere); }, {"'empty_typed'", "float_val"});
}

TEST(EventCodec, IntValOutOfRangeForItsDtypeIsAFormatError) {
  auto event = event_with_tensor("u8");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_UINT8);
  set_shape(tensor, {2});
  tensor.add_int_val(1);
  tensor.add_int_val(300);
  const auto payload = serialize(event);
  expect_format_error([&] { decode_event(payload, kWhere); }, {"'u8'", "300", "out of range"});
}

TEST(EventCodec, TensorContentWinsOverTypedFields) {
  // TensorFlow reads tensor_content whenever it is not empty.
  auto event = event_with_tensor("both");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_INT32);
  set_shape(tensor, {1});
  const std::int32_t content = 41;
  tensor.set_tensor_content(std::string(reinterpret_cast<const char*>(&content), 4));
  tensor.add_int_val(99);
  const auto decoded = decode_one(serialize(event));
  EXPECT_EQ(decoded.value.as_double(0), 41);
}

TEST(EventCodec, SingleStringIsBroadcast) {
  auto event = event_with_tensor("s");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_STRING);
  set_shape(tensor, {3});
  tensor.add_string_val("same");
  const auto decoded = decode_one(serialize(event));
  EXPECT_THAT(decoded.value.strings(), ElementsAre("same", "same", "same"));
}

INSTANTIATE_TEST_SUITE_P(Encodings, TypedFields,
                         ::testing::Values(Encoding::Packed, Encoding::Unpacked),
                         [](const ::testing::TestParamInfo<Encoding>& param_info) {
                           return param_info.param == Encoding::Packed ? "Packed" : "Unpacked";
                         });

// --- mode plugin data ------------------------------------------------------------------------

TEST(EventCodec, EveryModeRoundTrips) {
  const auto value = values<double>(DType::Float64, {1}, {0.5});
  for (const Mode mode : kAllModes) {
    SCOPED_TRACE(mode_name(mode));
    const auto decoded =
        decode_one(bytes_of(encode_tensor_event("m", value, 12345678901, mode, 77, 9.0)));
    EXPECT_EQ(decoded.mode, mode);
    EXPECT_EQ(decoded.mode_step, 77);
    EXPECT_EQ(decoded.step, 12345678901);
  }
}

TEST(EventCodec, WithoutPluginDataModeIsUnknown) {
  auto event = event_with_tensor("plain");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_FLOAT);
  tensor.add_float_val(1);
  auto* plugin = event.mutable_summary()->mutable_value(0)->mutable_metadata()->add_plugin_data();
  plugin->set_plugin_name("scalars");  // TensorBoard's own plugin: not a mode
  plugin->set_content("\x08\x01");
  const auto decoded = decode_one(serialize(event));
  EXPECT_FALSE(decoded.mode.has_value());
  EXPECT_FALSE(decoded.mode_step.has_value());
}

TEST(EventCodec, BadModePluginDataIsAFormatError) {
  for (const auto& [plugin_name, content] : std::vector<std::pair<std::string, std::string>>{
           {"mode", "7"}, {"mode", "TRAIN"}, {"mode_step", "12x"}, {"mode_step", ""}}) {
    SCOPED_TRACE(plugin_name + "=" + content);
    auto event = event_with_tensor("moded");
    tensor_of(event).set_dtype(tfproto::DT_FLOAT);
    tensor_of(event).add_float_val(1);
    auto* plugin = event.mutable_summary()->mutable_value(0)->mutable_metadata()->add_plugin_data();
    plugin->set_plugin_name(plugin_name);
    plugin->set_content(content);
    const auto payload = serialize(event);
    expect_format_error([&] { decode_event(payload, kWhere); }, {"'moded'", "'" + plugin_name});
    // A reader that knows the record from its index takes the mode from the index, as smdebug
    // does, and reads the value whatever its mode metadata says.
    const auto value = decode_tensor(payload, "moded", kWhere);
    ASSERT_TRUE(value.has_value());
    EXPECT_EQ(value->as_double(0), 1);
  }
}

// --- events and values without tensors ----------------------------------------------------

TEST(EventCodec, EventsWithoutTensorsYieldNothing) {
  tfproto::Event file_version;
  file_version.set_wall_time(1.0);
  file_version.set_file_version("brain.Event:2");
  EXPECT_TRUE(decode_event(serialize(file_version), kWhere).empty());

  tfproto::Event scalar;
  scalar.set_step(4);
  auto* value = scalar.mutable_summary()->add_value();
  value->set_tag("loss");
  value->set_simple_value(0.25f);
  EXPECT_TRUE(decode_event(serialize(scalar), kWhere).empty());

  EXPECT_TRUE(decode_event(SharedBytes(), kWhere).empty());
}

TEST(EventCodec, SeveralValuesInOneEventShareItsStep) {
  tfproto::Event event;
  event.set_step(8);
  event.set_wall_time(2.0);
  for (const std::string tag : {"a", "skipped", "b"}) {
    auto* value = event.mutable_summary()->add_value();
    value->set_tag(tag);
    if (tag == "skipped") {
      value->set_simple_value(1.0f);
      continue;
    }
    value->mutable_tensor()->set_dtype(tfproto::DT_INT64);
    value->mutable_tensor()->add_int64_val(tag == "a" ? 1 : 2);
  }
  const auto decoded = decode_event(serialize(event), kWhere);
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].name, "a");
  EXPECT_EQ(decoded[1].name, "b");
  EXPECT_EQ(decoded[0].step, 8);
  EXPECT_EQ(decoded[1].step, 8);
  EXPECT_EQ(decoded[1].value.as_double(0), 2);
}

TEST(EventCodec, DecodeTensorFindsTheNamedValueAndNothingElse) {
  tfproto::Event event;
  event.set_step(8);
  for (const std::string tag : {"a", "b"}) {
    auto* value = event.mutable_summary()->add_value();
    value->set_tag(tag);
    value->mutable_tensor()->set_dtype(tfproto::DT_INT64);
    value->mutable_tensor()->add_int64_val(tag == "a" ? 1 : 2);
  }
  const auto payload = serialize(event);
  const auto b = decode_tensor(payload, "b", kWhere);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->as_double(0), 2);
  EXPECT_FALSE(decode_tensor(payload, "c", kWhere).has_value());
  EXPECT_FALSE(decode_tensor(SharedBytes(), "a", kWhere).has_value());
}

TEST(EventCodec, DecodeTensorDecodesOnlyTheValueAskedFor) {
  // "broken" claims six elements and carries two: an error for whoever reads it, not for a
  // reader of "fine".
  tfproto::Event event;
  for (const std::string tag : {"broken", "fine"}) {
    auto* value = event.mutable_summary()->add_value();
    value->set_tag(tag);
    auto& tensor = *value->mutable_tensor();
    tensor.set_dtype(tfproto::DT_FLOAT);
    set_shape(tensor, {tag == "broken" ? 6 : 2});
    tensor.set_tensor_content(std::string(8, '\0'));
  }
  const auto payload = serialize(event);
  ASSERT_TRUE(decode_tensor(payload, "fine", kWhere).has_value());
  expect_format_error([&] { decode_tensor(payload, "broken", kWhere); },
                      {"tensor 'broken'", "8 bytes", "needs 24"});
}

TEST(EventCodec, DecodeTensorAtReadsAgainWhatLocateTensorFound) {
  tfproto::Event event;
  event.set_step(3);
  for (const std::string tag : {"first", "second"}) {
    auto* value = event.mutable_summary()->add_value();
    value->set_tag(tag);
    auto& tensor = *value->mutable_tensor();
    tensor.set_dtype(tfproto::DT_FLOAT);
    set_shape(tensor, {2, 3});
    const std::vector<float> elements = tag == "first" ? std::vector<float>{1, 2, 3, 4, 5, 6}
                                                       : std::vector<float>{-1, 0, 7, 8, 9, 10};
    tensor.set_tensor_content(std::string(reinterpret_cast<const char*>(elements.data()),
                                          elements.size() * sizeof(float)));
  }
  const auto payload = serialize(event);
  const auto located = locate_tensor(payload, "second", kWhere);
  ASSERT_TRUE(located.has_value());
  EXPECT_GT(located->tensor_field, 0u);
  EXPECT_EQ(static_cast<std::uint8_t>(payload.data()[located->tensor_field]), 0x42)
      << "field 8 (tensor), length-delimited";

  const TensorValue again = decode_tensor_at(payload, located->tensor_field, "second", kWhere);
  EXPECT_EQ(again.dtype(), DType::Float32);
  EXPECT_EQ(again.shape(), (Shape{2, 3}));
  EXPECT_EQ(again.as_double(0), -1);
  EXPECT_EQ(again.as_double(5), 10);
  // Zero-copy, as decode_tensor: the elements are the payload's own bytes.
  EXPECT_EQ(again.bytes().data(), located->value.bytes().data());
  EXPECT_GE(again.bytes().data(), payload.data());
  EXPECT_LT(again.bytes().data(), payload.data() + payload.size());

  // An offset that holds no tensor field is an error naming the place, never a wrong value.
  expect_format_error([&] { decode_tensor_at(payload, 0, "second", kWhere); },
                      {"tensor 'second'", "no tensor field at payload offset 0"});
  expect_format_error(
      [&] { decode_tensor_at(payload, located->tensor_field + 2, "second", kWhere); },
      {"tensor 'second'"});
  expect_format_error(
      [&] {
        decode_tensor_at(payload, static_cast<std::uint32_t>(payload.size()), "second", kWhere);
      },
      {"no tensor field at payload offset " + std::to_string(payload.size())});
}

// find_tensor_field walks to a tensor as locate_tensor does without decoding it; the TensorProto
// it finds is the one the field holds, its dtype is read without decoding the rest, and it
// decodes (decode_tensor_proto) as decode_tensor_at decodes it.
TEST(EventCodec, FindTensorFieldFindsWhatLocateTensorFindsWithoutDecoding) {
  tfproto::Event event;
  event.set_step(3);
  for (const std::string tag : {"first", "broken", "words"}) {
    auto* value = event.mutable_summary()->add_value();
    value->set_tag(tag);
    auto& tensor = *value->mutable_tensor();
    if (tag == "words") {
      tensor.add_string_val("a");  // as smdebug writes strings: dtype left at DT_INVALID
      continue;
    }
    tensor.set_dtype(tag == "first" ? tfproto::DT_DOUBLE : tfproto::DT_FLOAT);
    set_shape(tensor, {tag == "broken" ? 6 : 1});
    tensor.set_tensor_content(std::string(8, '\0'));  // too short for "broken"'s six floats
  }
  const auto payload = serialize(event);
  for (const std::string tag : {"first", "words"}) {
    const auto located = locate_tensor(payload, tag, kWhere);
    ASSERT_TRUE(located.has_value()) << tag;
    const auto found = find_tensor_field(payload, tag, kWhere);
    ASSERT_TRUE(found.has_value()) << tag;
    EXPECT_EQ(found->offset, located->tensor_field) << tag;
    // The TensorProto it gives is the one tensor_proto_at reads at that offset.
    const auto at = tensor_proto_at(payload, found->offset, tag, kWhere);
    EXPECT_EQ(found->tensor_proto.data(), at.data()) << tag;
    EXPECT_EQ(found->tensor_proto.size(), at.size()) << tag;
  }
  EXPECT_FALSE(find_tensor_field(payload, "missing", kWhere).has_value());

  // "broken" cannot be decoded, but it can be found, its bytes compared and its dtype read.
  const auto broken = find_tensor_field(payload, "broken", kWhere);
  ASSERT_TRUE(broken.has_value());
  const auto proto = broken->tensor_proto;
  tfproto::TensorProto parsed;
  ASSERT_TRUE(parsed.ParseFromArray(proto.data(), static_cast<int>(proto.size())));
  EXPECT_EQ(parsed.SerializeAsString(), event.summary().value(1).tensor().SerializeAsString());
  EXPECT_EQ(tensor_proto_dtype(payload, proto, "broken", kWhere), DType::Float32);
  expect_format_error([&] { decode_tensor_at(payload, broken->offset, "broken", kWhere); },
                      {"tensor 'broken'", "needs 24"});
  expect_format_error([&] { decode_tensor_proto(payload, proto, "broken", kWhere); },
                      {"tensor 'broken'", "needs 24"});

  const auto first = find_tensor_field(payload, "first", kWhere).value().tensor_proto;
  EXPECT_EQ(tensor_proto_dtype(payload, first, "first", kWhere), DType::Float64);
  const TensorValue first_value = decode_tensor_proto(payload, first, "first", kWhere);
  EXPECT_EQ(first_value.shape(), (Shape{1}));
  EXPECT_EQ(first_value.as_double(0), 0.0);
  EXPECT_GE(first_value.bytes().data(), payload.data()) << "zero-copy, as decode_tensor_at";
  const auto words = find_tensor_field(payload, "words", kWhere).value().tensor_proto;
  EXPECT_EQ(tensor_proto_dtype(payload, words, "words", kWhere), std::nullopt)
      << "DT_INVALID: strings, as smdebug writes them";

  // The same offsets as decode_tensor_at refuses are refused here too.
  expect_format_error([&] { tensor_proto_at(payload, 0, "first", kWhere); },
                      {"tensor 'first'", "no tensor field at payload offset 0"});
  expect_format_error([&] { tensor_proto_at(payload, broken->offset + 2, "broken", kWhere); },
                      {"tensor 'broken'"});
}

// A TensorProto whose fields are malformed has no dtype to read: an error, never a guess.
TEST(EventCodec, TensorProtoDtypeRefusesAMalformedTensorProto) {
  // Event{summary{value{tag: "t", tensor: <0x08>}}}: the TensorProto is dtype's tag alone, its
  // varint cut off.
  const auto payload =
      bytes_of(std::string("\x2a\x08"       // Event.summary, 8 bytes
                           "\x0a\x06"       // Summary.value, 6 bytes
                           "\x0a\x01t"      // Value.tag "t"
                           "\x42\x01\x08",  // Value.tensor, 1 byte
                           10));
  const auto field = find_tensor_field(payload, "t", kWhere);
  ASSERT_TRUE(field.has_value());
  EXPECT_EQ(field->offset, 7u);
  EXPECT_EQ(field->tensor_proto.size(), 1u);
  expect_format_error([&] { tensor_proto_dtype(payload, field->tensor_proto, "t", kWhere); },
                      {"tensor 't'", "truncated varint"});
}

TEST(EventCodec, GroupsAndTenByteVarintsAreReadAsProtobufReadsThem) {
  auto event = event_with_tensor("negative");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_INT32);
  set_shape(tensor, {2});
  tensor.add_int_val(-5);  // a negative int32 is a ten-byte varint on the wire
  tensor.add_int_val(std::numeric_limits<std::int32_t>::min());
  auto& group = *unknown_fields(tensor).AddGroup(40);
  group.AddVarint(1, 7);
  group.AddGroup(2)->AddFixed32(3, 1);  // nested
  const auto decoded = decode_one(serialize(event));
  EXPECT_EQ(decoded.value.as_double(0), -5);
  EXPECT_EQ(decoded.value.as_double(1), std::numeric_limits<std::int32_t>::min());

  // An eleven-byte varint (the step) and an end-group with no start are malformed.
  expect_format_error(
      [&] {
        decode_event(bytes_of(std::string("\x10") + std::string(10, '\xff') + "\x01"), kWhere);
      },
      {"Event field 2", "truncated varint"});
  expect_format_error([&] { decode_event(bytes_of(std::string("\x54", 1)), kWhere); },
                      {"Event field 10", "malformed unknown field"});
  // A tag longer than five bytes is not a tag.
  expect_format_error(
      [&] { decode_event(bytes_of(std::string("\x80\x80\x80\x80\x80\x01\x00", 7)), kWhere); },
      {"malformed field tag"});
}

TEST(EventCodec, UnknownFieldsAreSkippedAtEveryLevel) {
  const auto value = values<float>(DType::Float32, {2}, {1, 2});
  tfproto::Event event;
  ASSERT_TRUE(event.ParseFromString(encode_tensor_event("u", value, 6, Mode::Eval, 1, 1.0)));
  unknown_fields(event).AddLengthDelimited(10, "source metadata");
  unknown_fields(*event.mutable_summary()).AddVarint(99, 5);
  auto* summary_value = event.mutable_summary()->mutable_value(0);
  summary_value->set_node_name("node");
  summary_value->mutable_metadata()->set_display_name("shown");
  summary_value->mutable_tensor()->set_version_number(3);
  unknown_fields(*summary_value->mutable_tensor()).AddFixed64(30, 1);
  unknown_fields(*summary_value->mutable_tensor()->mutable_tensor_shape()->mutable_dim(0))
      .AddFixed32(9, 1);
  const auto decoded = decode_one(serialize(event));
  EXPECT_TRUE(decoded.value.identical_to(value));
  EXPECT_EQ(decoded.mode, Mode::Eval);
  EXPECT_EQ(decoded.step, 6);
}

TEST(EventCodec, StepAfterSummaryOnTheWireStillApplies) {
  // Build the Event by hand: summary (5) first, then step (2).
  tfproto::Event summary_only;
  auto* value = summary_only.mutable_summary()->add_value();
  value->set_tag("late");
  value->mutable_tensor()->set_dtype(tfproto::DT_FLOAT);
  value->mutable_tensor()->add_float_val(1);
  std::string bytes;
  ASSERT_TRUE(summary_only.SerializeToString(&bytes));
  bytes += std::string("\x10\x2a", 2);  // step = 42
  EXPECT_EQ(decode_one(bytes_of(bytes)).step, 42);
}

// --- malformed input ------------------------------------------------------------------------

TEST(EventCodec, TruncatedVarintIsAFormatError) {
  const auto payload = bytes_of(std::string("\x10\xff\xff", 3));  // step varint never ends
  expect_format_error([&] { decode_event(payload, kWhere); }, {"Event field 2", "varint"});
}

TEST(EventCodec, LengthBeyondThePayloadIsAFormatError) {
  const auto payload = bytes_of(std::string("\x2a\x50\x0a\x00", 4));  // summary of 80 bytes
  expect_format_error([&] { decode_event(payload, kWhere); },
                      {"Event field 5", "length 80 runs past the end", "payload offset 0"});
}

TEST(EventCodec, NestedLengthBeyondItsMessageIsAFormatError) {
  // The tensor claims 9 bytes but its Value holds only 2 after the tag.
  const std::string value = std::string("\x0a\x01t\x42\x09\x08\x01", 7);
  const std::string summary = "\x0a" + std::string(1, static_cast<char>(value.size())) + value;
  const std::string event = "\x2a" + std::string(1, static_cast<char>(summary.size())) + summary;
  const auto payload = bytes_of(event);
  expect_format_error([&] { decode_event(payload, kWhere); },
                      {"Summary.Value field 8", "runs past the end of Summary.Value"});
}

TEST(EventCodec, ContentSizeNotMatchingTheShapeIsAFormatError) {
  auto event = event_with_tensor("MLP_fc1.weight");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_FLOAT);
  set_shape(tensor, {2, 3});
  tensor.set_tensor_content(std::string(20, '\0'));
  const auto payload = serialize(event);
  expect_format_error([&] { decode_event(payload, kWhere); },
                      {"tensor 'MLP_fc1.weight'", "20 bytes", "[2, 3]", "needs 24"});
}

TEST(EventCodec, UnsupportedDtypeIsAFormatError) {
  auto event = event_with_tensor("resource");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(static_cast<tfproto::DataType>(20));  // DT_RESOURCE
  tensor.set_tensor_content("abcd");
  const auto payload = serialize(event);
  expect_format_error([&] { decode_event(payload, kWhere); }, {"'resource'", "dtype 20"});
}

TEST(EventCodec, WrongWireTypeIsAFormatError) {
  // Event.summary (5) sent as a varint.
  const auto payload = bytes_of(std::string("\x28\x01", 2));
  expect_format_error([&] { decode_event(payload, kWhere); },
                      {"Event field 5", "wire type varint, expected length-delimited"});
}

TEST(EventCodec, ShapeOverflowIsAFormatError) {
  auto event = event_with_tensor("huge");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_FLOAT);
  set_shape(tensor, {1ll << 40, 1ll << 40});
  tensor.add_float_val(1);
  const auto payload = serialize(event);
  expect_format_error([&] { decode_event(payload, kWhere); }, {"'huge'", "too many elements"});
}

TEST(EventCodec, HugeBroadcastIsRefused) {
  auto event = event_with_tensor("huge");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_DOUBLE);
  set_shape(tensor, {1ll << 40});
  tensor.add_double_val(1);
  const auto payload = serialize(event);
  expect_format_error([&] { decode_event(payload, kWhere); }, {"'huge'", "exceeds"});
}

// A 38-byte event whose one float is broadcast to a shape of 2^29 elements: it once made the
// reader allocate 2.37 GB and spend 13.8 s. A broadcast fills at most 64 MiB.
TEST(EventCodec, ASmallRecordCannotDeclareAHugeBroadcast) {
  const std::string hex =
      "09000000000000f03f10012a190a170a016142120801120812060880808080022a040000803f";
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  ASSERT_EQ(bytes.size(), 38u);
  const auto payload = SharedBytes::copy_of(std::as_bytes(std::span(bytes.data(), bytes.size())));
  expect_format_error([&] { decode_event(payload, kWhere); },
                      {"float_val broadcast to 536870912 elements exceeds 67108864 bytes"});

  // The same broadcast of a shape that fits stays a value.
  auto event = event_with_tensor("fits");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_FLOAT);
  set_shape(tensor, {1 << 20});  // 4 MiB of float32 from one value
  tensor.add_float_val(2.5f);
  const auto decoded = decode_one(serialize(event));
  EXPECT_EQ(decoded.value.bytes().size(), std::size_t{4} << 20);
}

// Padding a record (2.1 MB in a field no reader knows) once lifted the broadcast cap with the
// record's size, to 2 GiB: replay --max-memory 128 then peaked at 2.1 GB. The cap is fixed.
TEST(EventCodec, PaddingARecordDoesNotLiftTheBroadcastCap) {
  auto event = event_with_tensor("padded");
  auto& tensor = tensor_of(event);
  tensor.set_dtype(tfproto::DT_FLOAT);
  set_shape(tensor, {178956970, 3});  // 2 GiB of float32 from one value
  tensor.add_float_val(1.0f);
  std::string bytes = event.SerializeAsString();
  // Field 99, length-delimited (key 99 << 3 | 2 = 794: varint 0x9a 0x06), 2,100,000 zero bytes
  // (varint 0xa0 0x96 0x80 0x01).
  bytes += std::string("\x9a\x06\xa0\x96\x80\x01", 6) + std::string(2'100'000, '\0');
  const auto payload = SharedBytes::copy_of(std::as_bytes(std::span(bytes.data(), bytes.size())));
  expect_format_error([&] { decode_event(payload, kWhere); },
                      {"'padded'", "float_val broadcast to 536870910 elements exceeds " +
                                       std::to_string(kMaxBroadcastBytes) + " bytes"});
  // At the cap, a broadcast still decodes.
  auto at_cap = event_with_tensor("at_cap");
  auto& fits = tensor_of(at_cap);
  fits.set_dtype(tfproto::DT_FLOAT);
  set_shape(fits, {static_cast<std::int64_t>(kMaxBroadcastBytes / sizeof(float))});
  fits.add_float_val(1.0f);
  const auto decoded = decode_one(serialize(at_cap));
  EXPECT_EQ(decoded.value.bytes().size(), kMaxBroadcastBytes);
}

TEST(EventCodec, EveryTruncationIsAFormatErrorOrAShorterEvent) {
  // A record cut anywhere must never crash or read out of bounds (run under ASan too).
  const auto value = values<float>(DType::Float32, {2, 2}, {1, 2, 3, 4});
  const std::string full = encode_tensor_event("cut/me", value, 300, Mode::Train, 299, 1.0);
  for (std::size_t length = 0; length < full.size(); ++length) {
    SCOPED_TRACE(length);
    const auto payload = SharedBytes::copy_of(std::as_bytes(std::span(full.data(), length)));
    try {
      const auto decoded = decode_event(payload, kWhere);
      EXPECT_TRUE(decoded.empty());  // only a prefix without the summary can decode
    } catch (const FormatError& error) {
      EXPECT_EQ(error.where(), kWhere);
    }
  }
}

// --- real smdebug records --------------------------------------------------------------------

std::uint64_t read_u64_le(const std::string& bytes, std::size_t offset) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, sizeof(value));
  return value;
}

// Frames the records of a whole event file by hand (length, length CRC, payload, footer).
std::vector<std::string> payloads_of(const std::string& file) {
  std::vector<std::string> payloads;
  std::size_t offset = 0;
  while (offset < file.size()) {
    const auto length = read_u64_le(file, offset);
    EXPECT_LE(offset + 12 + length + 4, file.size());
    if (offset + 12 + length + 4 > file.size()) break;
    payloads.push_back(file.substr(offset + 12, length));
    offset += 12 + length + 4;
  }
  return payloads;
}

void expect_reencodes_identically(const std::string& payload_text, const std::string& where) {
  const auto payload = bytes_of(payload_text);
  const auto decoded = decode_event(payload, where);
  ASSERT_EQ(decoded.size(), 1u) << where;
  const auto& tensor = decoded.front();
  ASSERT_TRUE(tensor.mode.has_value()) << where;
  ASSERT_TRUE(tensor.mode_step.has_value()) << where;
  const std::string again = encode_tensor_event(tensor.name, tensor.value, tensor.step,
                                                *tensor.mode, *tensor.mode_step, tensor.wall_time);
  EXPECT_EQ(again, payload_text) << where << " (" << tensor.name << ")";
}

class RealSamples : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto samples = testing::samples_dir();
    if (!samples) GTEST_SKIP() << "smdebug samples not found (set RULESTREAM_SAMPLES)";
    trials_ = *samples / "trials";
  }
  std::filesystem::path trials_;
};

TEST_F(RealSamples, FirstReductionRecordReencodesByteForByte) {
  const auto file = testing::read_text_file(
      trials_ / "pt-mlp-reductions/events/000000000000/000000000000_worker_0.tfevents");
  ASSERT_GT(file.size(), 12u);
  const auto length = read_u64_le(file, 0);
  ASSERT_EQ(length, 93u);
  const std::string payload = file.substr(12, length);

  const auto decoded = decode_one(bytes_of(payload));
  EXPECT_EQ(decoded.name, "smdebug/reductions/min/MLP_fc1.weight");
  EXPECT_EQ(decoded.step, 0);
  EXPECT_EQ(decoded.mode, Mode::Train);
  EXPECT_EQ(decoded.mode_step, 0);
  EXPECT_EQ(decoded.value.dtype(), DType::Float32);
  EXPECT_TRUE(decoded.value.shape().empty());
  // Content bytes 47 68 64 be, as FORMAT.md's hexdump shows.
  EXPECT_EQ(std::bit_cast<std::uint32_t>(decoded.value.elements<float>()[0]), 0xbe646847u);
  expect_reencodes_identically(payload, "pt-mlp-reductions first record");
}

TEST_F(RealSamples, EveryDtypeRecordOfStepZeroReencodesByteForByte) {
  const auto file = testing::read_text_file(
      trials_ / "pt-dtypes/events/000000000000/000000000000_worker_0.tfevents");
  const auto payloads = payloads_of(file);
  ASSERT_EQ(payloads.size(), 21u);
  std::map<std::string, TensorValue> by_name;
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    expect_reencodes_identically(payloads[i], "pt-dtypes step 0 record " + std::to_string(i));
    const auto decoded = decode_one(bytes_of(payloads[i]));
    by_name.emplace(decoded.name, decoded.value);
  }
  EXPECT_EQ(by_name.at("dt_float16").dtype(), DType::Float16);
  EXPECT_EQ(by_name.at("dt_float64").dtype(), DType::Float64);
  EXPECT_EQ(by_name.at("dt_int64").dtype(), DType::Int64);
  EXPECT_EQ(by_name.at("dt_uint8").dtype(), DType::UInt8);
  EXPECT_EQ(by_name.at("dt_int8").dtype(), DType::Int8);  // not uint8, unlike smdebug's reader
  EXPECT_EQ(by_name.at("dt_bool").dtype(), DType::Bool);
  EXPECT_EQ(by_name.at("dt_bool").shape(), (Shape{3, 5}));
  EXPECT_TRUE(by_name.at("dt_scalar_0d").shape().empty());
  EXPECT_EQ(by_name.at("dt_4d").shape().size(), 4u);
  EXPECT_EQ(by_name.at("dt_python_float").dtype(), DType::Float64);
  EXPECT_EQ(by_name.at("dt_python_float").shape(), (Shape{1}));
  ASSERT_TRUE(by_name.at("dt_strings").is_string());
  EXPECT_THAT(by_name.at("dt_strings").strings(), ElementsAre("a", "bc", "step0"));
}

TEST_F(RealSamples, EveryRecordOfEveryTrialReencodesByteForByte) {
  std::size_t records = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(trials_)) {
    if (entry.path().extension() != ".tfevents") continue;
    const auto payloads = payloads_of(testing::read_text_file(entry.path()));
    for (std::size_t i = 0; i < payloads.size(); ++i) {
      expect_reencodes_identically(payloads[i],
                                   entry.path().string() + " record " + std::to_string(i));
      ++records;
    }
  }
  EXPECT_GT(records, 1000u);
}

}  // namespace
}  // namespace rulestream
