#include "stages/format/tensorboard_event.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/model/exceptions.hpp"
#include "stages/format/proto/event.pb.h"
#include "stages/format/tensorboard_values.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
namespace tfproto = rulestream::tfproto;

const std::string kWhere = "train/events.out.tfevents.1.host";

// The event serialised, and decoded: both kept, since the views point into the bytes.
struct Decoded {
  SharedBytes bytes;
  TensorBoardEvent event;
};

Decoded decode(const tfproto::Event& event) {
  Decoded decoded{SharedBytes::from_string(event.SerializeAsString()), {}};
  decode_tensorboard_event(decoded.bytes.span(), kWhere, decoded.event);
  return decoded;
}

tfproto::Summary::Value* add_value(tfproto::Event& event, const std::string& tag) {
  auto* value = event.mutable_summary()->add_value();
  value->set_tag(tag);
  return value;
}

void set_plugin(tfproto::Summary::Value* value, const std::string& plugin) {
  value->mutable_metadata()->add_plugin_data()->set_plugin_name(plugin);
}

SummaryReading reading_of(const Decoded& decoded, std::size_t index, std::string_view plugin) {
  return read_summary_value(decoded.event.values.at(index), plugin, decoded.bytes, kWhere);
}

TEST(TensorBoardEventTest, ReadsASimpleValueWithItsStepTimeAndPlugin) {
  tfproto::Event event;
  event.set_step(42);
  event.set_wall_time(1700000000.25);
  auto* value = add_value(event, "train/loss");
  value->set_simple_value(0.1F);
  set_plugin(value, "scalars");
  const Decoded decoded = decode(event);
  EXPECT_EQ(decoded.event.kind, EventKind::Summary);
  EXPECT_EQ(decoded.event.step, 42);
  EXPECT_EQ(decoded.event.wall_time, 1700000000.25);
  ASSERT_EQ(decoded.event.values.size(), 1U);
  const SummaryValueView& view = decoded.event.values[0];
  EXPECT_EQ(view.tag, "train/loss");
  EXPECT_TRUE(view.has_metadata);
  EXPECT_EQ(view.plugin_name, "scalars");
  EXPECT_EQ(view.field, SummaryValueField::SimpleValue);
  const SummaryReading reading = reading_of(decoded, 0, view.plugin_name);
  EXPECT_EQ(reading.kind, TagKind::Scalar);
  // float32 widened exactly, not rounded to the decimal 0.1
  EXPECT_EQ(reading.scalar, static_cast<double>(0.1F));
  EXPECT_NE(reading.scalar, 0.1);
}

TEST(TensorBoardEventTest, ALegacyHistogramGivesItsFiguresAndBucketCount) {
  tfproto::Event event;
  auto* histo = add_value(event, "weights")->mutable_histo();
  histo->set_min(-2.0);
  histo->set_max(3.0);
  histo->set_num(4.0);
  histo->set_sum(2.0);
  histo->set_sum_squares(14.0);
  for (const double limit : {-1.0, 0.0, 1.0, 3.0}) histo->add_bucket_limit(limit);
  for (const double count : {1.0, 1.0, 0.0, 2.0}) histo->add_bucket(count);
  const Decoded decoded = decode(event);
  const SummaryReading reading = reading_of(decoded, 0, "");
  ASSERT_EQ(reading.kind, TagKind::Histogram);
  EXPECT_EQ(reading.histogram.min, -2.0);
  EXPECT_EQ(reading.histogram.max, 3.0);
  EXPECT_EQ(reading.histogram.num, 4.0);
  EXPECT_EQ(reading.histogram.sum, 2.0);
  EXPECT_EQ(reading.histogram.sum_squares, 14.0);
  EXPECT_EQ(reading.histogram.buckets, 4U);
  EXPECT_EQ(reading.histogram.mean(), 0.5);
  // |x| from the buckets, each bucket's values spread evenly: [-2,-1] (the min as its left
  // edge) holds 1 of mean |x| 1.5; [-1,0] 1 of 0.5; [1,3] 2 of 2: (1.5 + 0.5 + 4) / 4.
  EXPECT_EQ(reading.histogram.abs_mean(), 1.5);
  // Quantiles over the same buckets, 4 values: 5% (0.2 values) lies 0.2 into [-2,-1]: -1.8;
  // 25% (1) at the end of it: -1; 50% (2) at the end of [-1,0]: 0; 75% (3) half-way through
  // [1,3]: 2; 95% (3.8) 0.9 of the way: 2.8.
  ASSERT_TRUE(reading.histogram.quantiles.has_value());
  const auto& quantiles = *reading.histogram.quantiles;
  EXPECT_DOUBLE_EQ(quantiles[0], -1.8);
  EXPECT_DOUBLE_EQ(quantiles[1], -1.0);
  EXPECT_DOUBLE_EQ(quantiles[2], 0.0);
  EXPECT_DOUBLE_EQ(quantiles[3], 2.0);
  EXPECT_DOUBLE_EQ(quantiles[4], 2.8);
}

TEST(TensorBoardEventTest, BucketQuantilesSpreadEachBucketsValuesEvenly) {
  // 20 values: 10 in [0,1], none in [1,1.5], 10 in [1.5,3.5]. 5% (1) 0.1 into the first: 0.1;
  // 25% (5): 0.5; 50% (10): its end, 1; 75% (15) half-way through the last: 2.5; 95% (19): 3.3.
  const std::vector<HistogramBucket> buckets{{.left = 0.0, .right = 1.0, .count = 10.0},
                                             {.left = 1.0, .right = 1.5, .count = 0.0},
                                             {.left = 1.5, .right = 3.5, .count = 10.0}};
  const auto quantiles = bucket_quantiles(buckets);
  ASSERT_TRUE(quantiles.has_value());
  EXPECT_DOUBLE_EQ((*quantiles)[0], 0.1);
  EXPECT_DOUBLE_EQ((*quantiles)[1], 0.5);
  EXPECT_DOUBLE_EQ((*quantiles)[2], 1.0);
  EXPECT_DOUBLE_EQ((*quantiles)[3], 2.5);
  EXPECT_DOUBLE_EQ((*quantiles)[4], 3.3);
  // Nothing counted, or a count that is no count: no quantiles.
  EXPECT_FALSE(bucket_quantiles(std::vector<HistogramBucket>{{0.0, 1.0, 0.0}}).has_value());
  EXPECT_FALSE(bucket_quantiles(std::vector<HistogramBucket>{{0.0, 1.0, -1.0}}).has_value());
  EXPECT_FALSE(bucket_quantiles(std::vector<HistogramBucket>{}).has_value());
}

TEST(TensorBoardEventTest, ABucketStraddlingZeroCountsTheMeanOfAbsoluteValuesOverIt) {
  EXPECT_EQ(mean_abs_between(-1.0, 3.0), (1.0 + 9.0) / 8.0);  // (l^2 + r^2) / (2 (r - l))
  EXPECT_EQ(mean_abs_between(-3.0, -1.0), 2.0);
  EXPECT_EQ(mean_abs_between(1.0, 2.0), 1.5);
}

TEST(TensorBoardEventTest, CountsAndLimitsThatDisagreeGiveNoAbsoluteMean) {
  tfproto::Event event;
  auto* histo = add_value(event, "weights")->mutable_histo();
  histo->set_num(2.0);
  histo->add_bucket_limit(1.0);
  histo->add_bucket(1.0);
  histo->add_bucket(1.0);
  const Decoded decoded = decode(event);
  EXPECT_FALSE(reading_of(decoded, 0, "").histogram.abs_mean().has_value());
}

TEST(TensorBoardEventTest, ABucketTensorUnderHistogramsIsAHistogramOfItsCountedBuckets) {
  tfproto::Event event;
  auto* value = add_value(event, "dense/kernel_0");
  set_plugin(value, "histograms");
  auto* tensor = value->mutable_tensor();
  tensor->set_dtype(tfproto::DT_DOUBLE);
  tensor->mutable_tensor_shape()->add_dim()->set_size(4);
  tensor->mutable_tensor_shape()->add_dim()->set_size(3);
  // rows: left edge, right edge, count. The first and last buckets count nothing.
  for (const double cell : {-9.0, -1.0, 0.0, -1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 1.0, 3.0, 1.0}) {
    tensor->add_double_val(cell);
  }
  const Decoded decoded = decode(event);
  const SummaryReading reading = reading_of(decoded, 0, "histograms");
  ASSERT_EQ(reading.kind, TagKind::Histogram);
  // By hand: num = 2 + 0 + 1 = 3; sum = 2 x (-0.5) + 1 x 2 = 1; edges of counted buckets.
  EXPECT_EQ(reading.histogram.num, 3.0);
  EXPECT_EQ(reading.histogram.sum, 1.0);
  EXPECT_EQ(reading.histogram.min, -1.0);
  EXPECT_EQ(reading.histogram.max, 3.0);
  EXPECT_DOUBLE_EQ(reading.histogram.mean(), 1.0 / 3.0);
  EXPECT_FALSE(reading.histogram.sum_squares.has_value());
  EXPECT_EQ(reading.histogram.buckets, 4U);
  // |x|: 2 values of mean 0.5 in [-1,0], 1 of mean 2 in [1,3]: (1 + 2) / 3.
  EXPECT_EQ(reading.histogram.abs_mean(), 1.0);
  // The median (1.5 of 3 values) lies 0.75 of the way through [-1,0]: -0.25.
  ASSERT_TRUE(reading.histogram.quantiles.has_value());
  EXPECT_DOUBLE_EQ((*reading.histogram.quantiles)[2], -0.25);
}

TEST(TensorBoardEventTest, AOneElementTensorUnderScalarsIsAScalarOfAnyRealDtype) {
  tfproto::Event event;
  auto* as_double = add_value(event, "lr")->mutable_tensor();
  as_double->set_dtype(tfproto::DT_DOUBLE);
  as_double->add_double_val(1e-300);  // not representable as float32: kept as double
  auto* as_int = add_value(event, "epoch")->mutable_tensor();
  as_int->set_dtype(tfproto::DT_INT64);
  as_int->add_int64_val(7);
  auto* as_content = add_value(event, "loss")->mutable_tensor();
  as_content->set_dtype(tfproto::DT_FLOAT);
  const float loss = 2.5F;
  as_content->set_tensor_content(std::string(reinterpret_cast<const char*>(&loss), sizeof loss));
  auto* pair = add_value(event, "pair")->mutable_tensor();
  pair->set_dtype(tfproto::DT_FLOAT);
  pair->mutable_tensor_shape()->add_dim()->set_size(2);
  pair->add_float_val(1.0F);
  pair->add_float_val(2.0F);
  const Decoded decoded = decode(event);
  EXPECT_EQ(reading_of(decoded, 0, "scalars").scalar, 1e-300);
  EXPECT_EQ(reading_of(decoded, 1, "scalars").scalar, 7.0);
  EXPECT_EQ(reading_of(decoded, 2, "scalars").scalar, 2.5);
  EXPECT_EQ(reading_of(decoded, 2, "scalars").kind, TagKind::Scalar);
  EXPECT_EQ(reading_of(decoded, 3, "scalars").kind, TagKind::Other);  // two elements
  EXPECT_EQ(reading_of(decoded, 2, "").kind, TagKind::Other);         // no plugin: not a scalar
}

TEST(TensorBoardEventTest, TextImagesAudioAndHparamsAreRecognisedAndPassedOver) {
  tfproto::Event event;
  auto* text = add_value(event, "args/text_summary");
  text->mutable_tensor()->set_dtype(tfproto::DT_STRING);
  text->mutable_tensor()->add_string_val("{\"lr\": 0.1}");
  add_value(event, "image")->mutable_image()->set_width(3);
  add_value(event, "audio")->mutable_audio()->set_sample_rate(16000.0F);
  set_plugin(add_value(event, "_hparams_/experiment"), "hparams");  // metadata only
  const Decoded decoded = decode(event);
  ASSERT_EQ(decoded.event.values.size(), 4U);
  EXPECT_EQ(reading_of(decoded, 0, "text").kind, TagKind::Text);
  EXPECT_EQ(reading_of(decoded, 1, "").kind, TagKind::Image);
  EXPECT_EQ(reading_of(decoded, 2, "").kind, TagKind::Other);
  EXPECT_EQ(decoded.event.values[3].field, SummaryValueField::None);
  EXPECT_EQ(reading_of(decoded, 3, "hparams").kind, TagKind::Other);
}

TEST(TensorBoardEventTest, ALegacyNodeNameStandsInForAnEmptyTag) {
  tfproto::Event event;
  auto* value = event.mutable_summary()->add_value();
  value->set_node_name("old/loss");
  value->set_simple_value(1.0F);
  const Decoded decoded = decode(event);
  EXPECT_EQ(decoded.event.values.at(0).tag, "old/loss");
}

TEST(TensorBoardEventTest, EventsWithoutSummariesSayWhatTheyAre) {
  tfproto::Event version;
  version.set_file_version("brain.Event:2");
  const Decoded decoded = decode(version);
  EXPECT_EQ(decoded.event.kind, EventKind::FileVersion);
  EXPECT_EQ(decoded.event.file_version, "brain.Event:2");
  EXPECT_TRUE(decoded.event.values.empty());

  tfproto::Event graph;
  add_value(graph, "loss")->set_simple_value(1.0F);
  graph.set_graph_def("\x0a\x00", 2);  // the oneof's last field wins: no longer a summary
  EXPECT_EQ(decode(graph).event.kind, EventKind::GraphDef);
  EXPECT_TRUE(decode(graph).event.values.empty());

  tfproto::Event log;
  log.mutable_session_log()->set_status(tfproto::SessionLog::START);
  EXPECT_EQ(decode(log).event.kind, EventKind::SessionLog);
  EXPECT_EQ(decode(tfproto::Event()).event.kind, EventKind::None);
}

TEST(TensorBoardEventTest, MalformedBytesNameTheFile) {
  const std::string bytes = "\x0a\x05tr";  // a length-delimited field running past the end
  TensorBoardEvent event;
  try {
    decode_tensorboard_event(std::as_bytes(std::span(bytes.data(), bytes.size())), kWhere, event);
    FAIL() << "no error";
  } catch (const FormatError& error) {
    EXPECT_THAT(error.what(), HasSubstr(kWhere));
  }
}

TEST(TensorBoardEventTest, AMalformedTensorNamesItsTag) {
  tfproto::Event event;
  auto* tensor = add_value(event, "loss")->mutable_tensor();
  tensor->set_dtype(tfproto::DT_FLOAT);
  tensor->set_tensor_content("abc");  // three bytes for one float32
  const Decoded decoded = decode(event);
  try {
    reading_of(decoded, 0, "scalars");
    FAIL() << "no error";
  } catch (const FormatError& error) {
    EXPECT_THAT(error.what(), HasSubstr(kWhere));
    EXPECT_THAT(error.what(), HasSubstr("'loss'"));
  }
}

TEST(TensorBoardEventTest, DecodingAgainReusesTheEventAndForgetsTheLastOne) {
  tfproto::Event first;
  add_value(first, "a")->set_simple_value(1.0F);
  add_value(first, "b")->set_simple_value(2.0F);
  tfproto::Event second;
  second.set_step(3);
  add_value(second, "c")->set_simple_value(3.0F);
  const std::string first_bytes = first.SerializeAsString();
  const std::string second_bytes = second.SerializeAsString();
  TensorBoardEvent event;
  decode_tensorboard_event(std::as_bytes(std::span(first_bytes.data(), first_bytes.size())), kWhere,
                           event);
  decode_tensorboard_event(std::as_bytes(std::span(second_bytes.data(), second_bytes.size())),
                           kWhere, event);
  ASSERT_EQ(event.values.size(), 1U);
  EXPECT_EQ(event.values[0].tag, "c");
  EXPECT_EQ(event.step, 3);
}

}  // namespace
}  // namespace rulestream
