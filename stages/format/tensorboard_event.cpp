#include "stages/format/tensorboard_event.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "stages/format/message_reader.hpp"

namespace rulestream {
namespace {

using wire::ErrorContext;
using wire::MessageReader;
using wire::WireType;

// TensorFlow's and TensorBoard's field numbers (stages/format/proto/event.proto).
namespace field {
constexpr int kEventWallTime = 1;
constexpr int kEventStep = 2;
constexpr int kEventFileVersion = 3;
constexpr int kEventGraphDef = 4;
constexpr int kEventSummary = 5;
constexpr int kEventLogMessage = 6;
constexpr int kEventSessionLog = 7;
constexpr int kEventTaggedRunMetadata = 8;
constexpr int kEventMetaGraphDef = 9;
constexpr int kSummaryValue = 1;
constexpr int kValueTag = 1;
constexpr int kValueSimpleValue = 2;
constexpr int kValueObsoleteHistogram = 3;
constexpr int kValueImage = 4;
constexpr int kValueHisto = 5;
constexpr int kValueAudio = 6;
constexpr int kValueNodeName = 7;
constexpr int kValueTensor = 8;
constexpr int kValueMetadata = 9;
constexpr int kMetadataPluginData = 1;
constexpr int kPluginName = 1;
constexpr int kPluginContent = 2;
constexpr int kHistoMin = 1;
constexpr int kHistoMax = 2;
constexpr int kHistoNum = 3;
constexpr int kHistoSum = 4;
constexpr int kHistoSumSquares = 5;
constexpr int kHistoBucketLimit = 6;
constexpr int kHistoBucket = 7;
}  // namespace field

std::string_view text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// A message field met again on the wire merges into what was read (protobuf's rule), so each
// parse_* below reads into the view it is given rather than into a fresh one.
void parse_plugin_data(std::span<const std::byte> bytes, const ErrorContext& context,
                       SummaryValueView& value) {
  MessageReader reader(bytes, context, "SummaryMetadata.PluginData");
  while (reader.next()) {
    if (reader.field_number() == field::kPluginName) {
      value.plugin_name = text_of(reader.read_bytes());
    } else if (reader.field_number() == field::kPluginContent) {
      value.plugin_content_bytes = reader.read_bytes().size();
    } else {
      reader.skip();
    }
  }
}

void parse_metadata(std::span<const std::byte> bytes, const ErrorContext& context,
                    SummaryValueView& value) {
  value.has_metadata = true;
  MessageReader reader(bytes, context, "SummaryMetadata");
  while (reader.next()) {
    if (reader.field_number() == field::kMetadataPluginData) {
      parse_plugin_data(reader.read_bytes(), context, value);
    } else {
      reader.skip();
    }
  }
}

// Bucket limits and counts as the wire holds them; histograms are few beside scalars, so their
// buckets are read into vectors of their own.
struct Buckets {
  std::vector<double> limits;
  std::vector<double> counts;
};

// The sum of |x| a histogram's buckets stand for: bucket i holds the values between limit i-1
// (the histogram's min for the first) and limit i, both clamped to [min, max] (TensorBoard's
// outer limits are +-DBL_MAX). Absent when counts and limits disagree.
std::optional<double> bucket_abs_sum(const Buckets& buckets, double min, double max) {
  if (buckets.limits.size() != buckets.counts.size()) return std::nullopt;
  double abs_sum = 0.0;
  for (std::size_t i = 0; i < buckets.counts.size(); ++i) {
    if (buckets.counts[i] == 0.0) continue;
    const double left = std::clamp(i == 0 ? min : buckets.limits[i - 1], min, max);
    const double right = std::clamp(buckets.limits[i], min, max);
    abs_sum += buckets.counts[i] * mean_abs_between(left, right);
  }
  return abs_sum;
}

// The quantiles the same buckets stand for, with the same edges.
std::optional<std::array<double, kHistogramQuantiles.size()>> proto_quantiles(
    const Buckets& buckets, double min, double max) {
  if (buckets.limits.size() != buckets.counts.size()) return std::nullopt;
  std::vector<HistogramBucket> edged;
  edged.reserve(buckets.counts.size());
  for (std::size_t i = 0; i < buckets.counts.size(); ++i) {
    if (buckets.counts[i] == 0.0) continue;
    edged.push_back({.left = std::clamp(i == 0 ? min : buckets.limits[i - 1], min, max),
                     .right = std::clamp(buckets.limits[i], min, max),
                     .count = buckets.counts[i]});
  }
  return bucket_quantiles(edged);
}

void parse_histogram(std::span<const std::byte> bytes, const ErrorContext& context,
                     HistogramFigures& histogram, Buckets& buckets) {
  MessageReader reader(bytes, context, "HistogramProto");
  // proto3 writes no field that holds its default: an absent sum_squares is 0.
  if (!histogram.sum_squares) histogram.sum_squares = 0.0;
  while (reader.next()) {
    switch (reader.field_number()) {
      case field::kHistoMin:
        histogram.min = reader.read_double();
        break;
      case field::kHistoMax:
        histogram.max = reader.read_double();
        break;
      case field::kHistoNum:
        histogram.num = reader.read_double();
        break;
      case field::kHistoSum:
        histogram.sum = reader.read_double();
        break;
      case field::kHistoSumSquares:
        histogram.sum_squares = reader.read_double();
        break;
      case field::kHistoBucketLimit:
        wire::read_repeated<double>(reader, buckets.limits);
        break;
      case field::kHistoBucket:
        wire::read_repeated<double>(reader, buckets.counts);
        break;
      default:
        reader.skip();
    }
  }
}

void parse_value(std::span<const std::byte> bytes, const ErrorContext& outer,
                 SummaryValueView& value) {
  // The value's own errors name its tag once it is known; until then, the record.
  ErrorContext context{outer.where, outer.payload_begin, {}};
  MessageReader reader(bytes, context, "Summary.Value");
  std::string_view node_name;
  Buckets buckets;
  while (reader.next()) {
    switch (reader.field_number()) {
      case field::kValueTag:
        value.tag = text_of(reader.read_bytes());
        context.tag = value.tag;
        break;
      case field::kValueNodeName:
        node_name = text_of(reader.read_bytes());
        break;
      case field::kValueMetadata:
        parse_metadata(reader.read_bytes(), context, value);
        break;
      case field::kValueSimpleValue:
        reader.expect(WireType::Fixed32);
        value.simple_value = reader.read_scalar<float>();
        value.field = SummaryValueField::SimpleValue;
        break;
      case field::kValueObsoleteHistogram:
        reader.read_bytes();
        value.field = SummaryValueField::ObsoleteOldStyleHistogram;
        break;
      case field::kValueImage:
        reader.read_bytes();
        value.field = SummaryValueField::Image;
        break;
      case field::kValueHisto:
        if (value.field != SummaryValueField::Histogram) {
          value.histogram = {};
          buckets = {};
        }
        parse_histogram(reader.read_bytes(), context, value.histogram, buckets);
        value.field = SummaryValueField::Histogram;
        break;
      case field::kValueAudio:
        reader.read_bytes();
        value.field = SummaryValueField::Audio;
        break;
      case field::kValueTensor:
        value.tensor = reader.read_bytes();
        value.field = SummaryValueField::Tensor;
        break;
      default:
        reader.skip();
    }
  }
  if (value.tag.empty()) value.tag = node_name;
  if (value.field == SummaryValueField::Histogram) {
    value.histogram.buckets = buckets.counts.size();
    value.histogram.abs_sum = bucket_abs_sum(buckets, value.histogram.min, value.histogram.max);
    value.histogram.quantiles = proto_quantiles(buckets, value.histogram.min, value.histogram.max);
  }
}

void parse_summary(std::span<const std::byte> bytes, const ErrorContext& context,
                   std::vector<SummaryValueView>& values) {
  MessageReader reader(bytes, context, "Summary");
  while (reader.next()) {
    if (reader.field_number() != field::kSummaryValue) {
      reader.skip();
      continue;
    }
    parse_value(reader.read_bytes(), context, values.emplace_back());
  }
}

EventKind other_event_kind(int field_number) {
  switch (field_number) {
    case field::kEventGraphDef:
      return EventKind::GraphDef;
    case field::kEventLogMessage:
      return EventKind::LogMessage;
    case field::kEventSessionLog:
      return EventKind::SessionLog;
    case field::kEventTaggedRunMetadata:
      return EventKind::TaggedRunMetadata;
    default:
      return EventKind::MetaGraphDef;
  }
}

}  // namespace

double HistogramFigures::mean() const {
  return num > 0.0 ? sum / num : std::numeric_limits<double>::quiet_NaN();
}

std::optional<double> HistogramFigures::abs_mean() const {
  if (!abs_sum) return std::nullopt;
  return num > 0.0 ? *abs_sum / num : std::numeric_limits<double>::quiet_NaN();
}

std::optional<std::array<double, kHistogramQuantiles.size()>> bucket_quantiles(
    std::span<const HistogramBucket> buckets) {
  double total = 0.0;
  for (const HistogramBucket& bucket : buckets) {
    if (!(bucket.count >= 0.0) || !std::isfinite(bucket.count)) return std::nullopt;
    total += bucket.count;
  }
  if (!(total > 0.0)) return std::nullopt;
  std::array<double, kHistogramQuantiles.size()> values{};
  std::size_t next = 0;  // the next quantile to place; they increase, so one walk places all
  double below = 0.0;    // the count of the buckets before this one
  for (const HistogramBucket& bucket : buckets) {
    if (bucket.count == 0.0) continue;
    while (next < values.size() && kHistogramQuantiles[next] * total <= below + bucket.count) {
      const double within = (kHistogramQuantiles[next] * total - below) / bucket.count;
      values[next++] = bucket.left + within * (bucket.right - bucket.left);
    }
    below += bucket.count;
  }
  // Rounding in the running count may leave the top quantiles just past the last bucket.
  for (; next < values.size(); ++next) values[next] = buckets.back().right;
  return values;
}

double mean_abs_between(double left, double right) {
  if (left >= 0.0) return (left + right) / 2.0;
  if (right <= 0.0) return -(left + right) / 2.0;
  // Straddling zero: (left^2 + right^2) / 2 over the width.
  return (left * left + right * right) / (2.0 * (right - left));
}

void decode_tensorboard_event(std::span<const std::byte> payload, const std::string& where,
                              TensorBoardEvent& event) {
  event.wall_time = 0.0;
  event.step = 0;
  event.kind = EventKind::None;
  event.file_version = {};
  event.values.clear();
  const ErrorContext context{where, payload.data(), {}};
  if (payload.size() > static_cast<std::size_t>(INT_MAX)) {
    wire::fail(context, "event of " + std::to_string(payload.size()) +
                            " bytes exceeds protobuf's 2 GiB message limit");
  }
  MessageReader reader(payload, context, "Event");
  while (reader.next()) {
    switch (reader.field_number()) {
      case field::kEventWallTime:
        event.wall_time = reader.read_double();
        break;
      case field::kEventStep:
        event.step = static_cast<std::int64_t>(reader.read_varint());
        break;
      case field::kEventFileVersion:
        event.file_version = text_of(reader.read_bytes());
        event.kind = EventKind::FileVersion;
        event.values.clear();  // a oneof holds its last field
        break;
      case field::kEventSummary:
        // A summary met again merges into the one before: its values follow that one's.
        if (event.kind != EventKind::Summary) event.values.clear();
        parse_summary(reader.read_bytes(), context, event.values);
        event.kind = EventKind::Summary;
        break;
      case field::kEventGraphDef:
      case field::kEventLogMessage:
      case field::kEventSessionLog:
      case field::kEventTaggedRunMetadata:
      case field::kEventMetaGraphDef:
        reader.read_bytes();
        event.kind = other_event_kind(reader.field_number());
        event.values.clear();
        break;
      default:
        reader.skip();
    }
  }
}

}  // namespace rulestream
