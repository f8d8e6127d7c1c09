#pragma once

// What a TensorBoard summary value is, read as TensorBoard reads it: by its value field, and for
// a tensor by its tag's plugin (which only the tag's first value carries, so the caller keeps
// it). A tensor that does not have the shape its plugin promises is Other, not an error: the
// value is passed over as TensorBoard's loaders pass it over.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/model/shared_bytes.hpp"
#include "stages/format/tensorboard_event.hpp"

namespace rulestream {

enum class TagKind : std::uint8_t { Scalar, Histogram, Text, Image, Other };

// "scalar", "histogram", "text", "image", "other": the names inspect --json uses.
std::string_view tag_kind_name(TagKind kind);

struct SummaryReading {
  TagKind kind = TagKind::Other;
  double scalar = 0.0;         // kind == Scalar: the value, float32 widened exactly to double
  HistogramFigures histogram;  // kind == Histogram
};

// Reads `value` (decoded from `payload`, the record's bytes) under `plugin`, its tag's plugin:
//  - simple_value: a scalar; the legacy HistogramProto `histo`: a histogram; `image`: an image;
//  - a tensor under "scalars" holding exactly one real number (any dtype; TF2's tf.summary and
//    PyTorch's new_style write these): a scalar;
//  - a [k,3] real tensor under "histograms" (rows: left edge, right edge, count; Keras and TF2):
//    a histogram with num = the counts' sum, min and max the outer edges of the buckets that
//    count something (of all buckets when none does), sum = sum of count x bucket centre, in
//    bucket order, and no sum_squares;
//  - a tensor under "text": text; under "images": an image;
//  - anything else (audio, hparams, pr_curves, graphs, a value with no field set): other.
// A tensor whose protobuf is malformed throws FormatError naming `where` and the tag.
SummaryReading read_summary_value(const SummaryValueView& value, std::string_view plugin,
                                  const SharedBytes& payload, const std::string& where);

}  // namespace rulestream
