#pragma once

// One TensorBoard Event record, walked without copying: what the record is (a summary, the
// file_version header, a graph, ...) and, for a summary, each Summary.Value's tag, plugin and
// value field as views into the record's payload. What a value means (a scalar, a histogram)
// depends on its tag's plugin, which only the tag's first value carries: tensorboard_values.hpp
// reads it once the caller knows the plugin.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

// Which field of Event's `what` oneof a record sets (the last one on the wire, as protobuf
// reads a oneof).
enum class EventKind : std::uint8_t {
  None,
  FileVersion,
  GraphDef,
  Summary,
  LogMessage,
  SessionLog,
  TaggedRunMetadata,
  MetaGraphDef,
};

// Which field of Summary.Value's `value` oneof is set. PyTorch's add_hparams writes values with
// metadata and no value at all (None).
enum class SummaryValueField : std::uint8_t {
  None,
  SimpleValue,
  ObsoleteOldStyleHistogram,
  Image,
  Histogram,  // the legacy HistogramProto (`histo`)
  Audio,
  Tensor,
};

// The figures of a histogram, from a HistogramProto or from a [k,3] histogram tensor
// (tensorboard_values.hpp). `sum_squares` is absent where the source has none ([k,3] tensors).
// The fractions of a histogram's count whose values HistogramFigures::quantiles gives: the
// 5th, 25th, 50th, 75th and 95th percentiles (TensorBoard's distributions plot draws these
// bands, with the outer limits).
inline constexpr std::array<double, 5> kHistogramQuantiles{0.05, 0.25, 0.5, 0.75, 0.95};

struct HistogramFigures {
  double min = 0.0;
  double max = 0.0;
  double num = 0.0;  // how many values the histogram counts
  double sum = 0.0;
  std::optional<double> sum_squares;
  // The sum of absolute values, estimated from the buckets (each bucket's count times the mean
  // of |x| over its edges, as if its values were spread evenly between them); absent when the
  // buckets do not say (a HistogramProto whose counts and limits disagree).
  std::optional<double> abs_sum;
  // The values at kHistogramQuantiles of the count, estimated from the buckets as abs_sum is
  // (values spread evenly within a bucket); absent when the buckets do not say or count nothing.
  std::optional<std::array<double, kHistogramQuantiles.size()>> quantiles;
  std::size_t buckets = 0;

  // sum / num; NaN for an empty histogram.
  double mean() const;
  // abs_sum / num; nullopt without abs_sum, NaN for an empty histogram.
  std::optional<double> abs_mean() const;
};

// One bucket of a histogram: the values between two edges, and how many there are.
struct HistogramBucket {
  double left = 0.0;
  double right = 0.0;
  double count = 0.0;
};

// The values at kHistogramQuantiles of the buckets' total count, each bucket's values taken as
// spread evenly between its edges (buckets in increasing order of edges); nullopt when they
// count nothing, or a count is negative or not finite.
std::optional<std::array<double, kHistogramQuantiles.size()>> bucket_quantiles(
    std::span<const HistogramBucket> buckets);

// The mean of |x| for x spread evenly over [left, right]: what a bucket holding values between
// those edges contributes, per value, to a histogram's sum of absolute values.
double mean_abs_between(double left, double right);

// One Summary.Value; its views point into the payload it was decoded from.
struct SummaryValueView {
  std::string_view tag;  // `tag`, or the legacy `node_name` where `tag` is empty
  bool has_metadata = false;
  std::string_view plugin_name;  // metadata.plugin_data.plugin_name; empty when none
  std::size_t plugin_content_bytes = 0;
  SummaryValueField field = SummaryValueField::None;
  float simple_value = 0.0F;          // field == SimpleValue
  HistogramFigures histogram;         // field == Histogram
  std::span<const std::byte> tensor;  // field == Tensor: the TensorProto message, not decoded
};

struct TensorBoardEvent {
  double wall_time = 0.0;
  std::int64_t step = 0;
  EventKind kind = EventKind::None;
  std::string_view file_version;         // kind == FileVersion
  std::vector<SummaryValueView> values;  // kind == Summary, in record order
};

// Decodes one Event payload into `event` (its `values` keep their capacity from call to call,
// so a reader that reuses one event allocates nothing per record). Views point into `payload`.
// Malformed protobuf throws FormatError naming `where`.
void decode_tensorboard_event(std::span<const std::byte> payload, const std::string& where,
                              TensorBoardEvent& event);

}  // namespace rulestream
