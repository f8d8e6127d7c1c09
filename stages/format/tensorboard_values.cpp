#include "stages/format/tensorboard_values.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stages/format/event_codec.hpp"

namespace rulestream {
namespace {

// The tensor decoded when it holds real numbers; nullopt for strings, complex numbers and
// dtypes this reader does not decode. Only the dtype is read of a string tensor (an image's
// PNG bytes are never copied).
std::optional<TensorValue> real_tensor(const SummaryValueView& value, const SharedBytes& payload,
                                       const std::string& where) {
  const auto dtype = tensor_proto_dtype(payload, value.tensor, value.tag, where);
  if (!dtype || !is_real_numeric(*dtype)) return std::nullopt;
  return decode_tensor_proto(payload, value.tensor, value.tag, where);
}

HistogramFigures bucket_histogram(const TensorValue& tensor) {
  HistogramFigures figures;
  const auto buckets = static_cast<std::size_t>(tensor.shape()[0]);
  figures.buckets = buckets;
  double low_all = std::numeric_limits<double>::infinity();
  double high_all = -std::numeric_limits<double>::infinity();
  double low = low_all;
  double high = high_all;
  double abs_sum = 0.0;
  std::vector<HistogramBucket> rows;
  rows.reserve(buckets);
  for (std::size_t row = 0; row < buckets; ++row) {
    const auto at = static_cast<std::int64_t>(row * 3);
    const double left = tensor.as_double(at);
    const double right = tensor.as_double(at + 1);
    const double count = tensor.as_double(at + 2);
    low_all = std::min(low_all, left);
    high_all = std::max(high_all, right);
    if (count != 0.0) {
      low = std::min(low, left);
      high = std::max(high, right);
    }
    figures.num += count;
    figures.sum += count * ((left + right) / 2.0);
    abs_sum += count * mean_abs_between(left, right);
    rows.push_back({.left = left, .right = right, .count = count});
  }
  figures.abs_sum = abs_sum;
  figures.quantiles = bucket_quantiles(rows);
  const bool any_counted = low <= high;
  if (buckets == 0) {
    figures.min = figures.max = std::numeric_limits<double>::quiet_NaN();
  } else {
    figures.min = any_counted ? low : low_all;
    figures.max = any_counted ? high : high_all;
  }
  return figures;
}

SummaryReading read_tensor(const SummaryValueView& value, std::string_view plugin,
                           const SharedBytes& payload, const std::string& where) {
  SummaryReading reading;
  if (plugin == "scalars") {
    const auto tensor = real_tensor(value, payload, where);
    if (tensor && tensor->size() == 1) {
      reading.kind = TagKind::Scalar;
      reading.scalar = tensor->as_double(0);
    }
  } else if (plugin == "histograms") {
    const auto tensor = real_tensor(value, payload, where);
    if (tensor && tensor->shape().size() == 2 && tensor->shape()[1] == 3) {
      reading.kind = TagKind::Histogram;
      reading.histogram = bucket_histogram(*tensor);
    }
  } else if (plugin == "text") {
    reading.kind = TagKind::Text;
  } else if (plugin == "images") {
    reading.kind = TagKind::Image;
  }
  return reading;
}

}  // namespace

std::string_view tag_kind_name(TagKind kind) {
  switch (kind) {
    case TagKind::Scalar:
      return "scalar";
    case TagKind::Histogram:
      return "histogram";
    case TagKind::Text:
      return "text";
    case TagKind::Image:
      return "image";
    case TagKind::Other:
      break;
  }
  return "other";
}

SummaryReading read_summary_value(const SummaryValueView& value, std::string_view plugin,
                                  const SharedBytes& payload, const std::string& where) {
  SummaryReading reading;
  switch (value.field) {
    case SummaryValueField::SimpleValue:
      reading.kind = TagKind::Scalar;
      reading.scalar = static_cast<double>(value.simple_value);
      break;
    case SummaryValueField::Histogram:
      reading.kind = TagKind::Histogram;
      reading.histogram = value.histogram;
      break;
    case SummaryValueField::Image:
      reading.kind = TagKind::Image;
      break;
    case SummaryValueField::Tensor:
      return read_tensor(value, plugin, payload, where);
    case SummaryValueField::None:
    case SummaryValueField::ObsoleteOldStyleHistogram:
    case SummaryValueField::Audio:
      break;
  }
  return reading;
}

}  // namespace rulestream
