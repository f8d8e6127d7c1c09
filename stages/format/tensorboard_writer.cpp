#include "stages/format/tensorboard_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <system_error>
#include <vector>

#include "core/model/exceptions.hpp"
#include "stages/format/proto/event.pb.h"
#include "stages/format/tfrecord_writer.hpp"

namespace rulestream {
namespace {

std::string system_error_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// TensorBoard's default bucket right edges (tensorboard/plugins/histogram/summary_v2's legacy
// twin, TensorFlow's histogram.cc): 1e-12 growing by 10% to 1e20, mirrored below zero, with 0
// between and DBL_MAX last.
const std::vector<double>& default_limits() {
  static const std::vector<double> limits = [] {
    std::vector<double> positive;
    for (double limit = 1e-12; limit < 1e20; limit *= 1.1) positive.push_back(limit);
    std::vector<double> all;
    for (auto at = positive.rbegin(); at != positive.rend(); ++at) all.push_back(-*at);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    all.push_back(DBL_MAX);
    return all;
  }();
  return limits;
}

void fill_histogram(std::span<const float> values, tfproto::HistogramProto& histogram) {
  const auto& limits = default_limits();
  std::vector<double> counts(limits.size(), 0.0);
  double sum = 0.0;
  double sum_squares = 0.0;
  double low = DBL_MAX;
  double high = -DBL_MAX;
  for (const float value : values) {
    const double x = value;
    // Bucket i counts the values in (limits[i-1], limits[i]].
    const auto bucket = std::lower_bound(limits.begin(), limits.end(), x) - limits.begin();
    counts[static_cast<std::size_t>(
        std::min<std::ptrdiff_t>(bucket, static_cast<std::ptrdiff_t>(limits.size()) - 1))] += 1.0;
    sum += x;
    sum_squares += x * x;
    low = std::min(low, x);
    high = std::max(high, x);
  }
  histogram.set_min(values.empty() ? 0.0 : low);
  histogram.set_max(values.empty() ? 0.0 : high);
  histogram.set_num(static_cast<double>(values.size()));
  histogram.set_sum(sum);
  histogram.set_sum_squares(sum_squares);
  // The buckets from the first that counts something to the last, empty ones between kept so
  // that each bucket's left edge is the limit before it.
  const auto first = std::find_if(counts.begin(), counts.end(), [](double c) { return c > 0; });
  const auto last = std::find_if(counts.rbegin(), counts.rend(), [](double c) { return c > 0; });
  if (first == counts.end()) return;
  const auto begin = static_cast<std::size_t>(first - counts.begin());
  const auto end = counts.size() - static_cast<std::size_t>(last - counts.rbegin());
  for (std::size_t i = begin; i < end; ++i) {
    histogram.add_bucket_limit(limits[i]);
    histogram.add_bucket(counts[i]);
  }
}

}  // namespace

TensorBoardWriter::TensorBoardWriter(std::filesystem::path path, Options options)
    : path_(std::move(path)), options_(options) {
  std::error_code error;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), error);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw StorageError("cannot write " + path_.string() + ": " + system_error_text(errno));
  }
  if (options_.file_version) {
    tfproto::Event event;
    event.set_wall_time(0.0);
    event.set_file_version("brain.Event:2");
    append_event(event.SerializeAsString());
  }
}

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TensorBoardWriter::add_scalar(const std::string& tag, std::int64_t step, float value,
                                   double wall_time) {
  tfproto::Event event;
  event.set_step(step);
  event.set_wall_time(wall_time);
  auto* summary_value = event.mutable_summary()->add_value();
  summary_value->set_tag(tag);
  if (options_.scalars == ScalarStyle::SimpleValue) {
    summary_value->set_simple_value(value);
  } else {
    if (tensor_tags_.insert(tag).second) {
      summary_value->mutable_metadata()->add_plugin_data()->set_plugin_name("scalars");
    }
    summary_value->mutable_tensor()->set_dtype(tfproto::DT_FLOAT);
    summary_value->mutable_tensor()->add_float_val(value);
  }
  append_event(event.SerializeAsString());
}

void TensorBoardWriter::add_histogram(const std::string& tag, std::int64_t step,
                                      std::span<const float> values, double wall_time) {
  tfproto::Event event;
  event.set_step(step);
  event.set_wall_time(wall_time);
  auto* summary_value = event.mutable_summary()->add_value();
  summary_value->set_tag(tag);
  fill_histogram(values, *summary_value->mutable_histo());
  append_event(event.SerializeAsString());
}

void TensorBoardWriter::append_raw(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw StorageError("cannot write " + path_.string() + ": " + system_error_text(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

void TensorBoardWriter::append_event(const std::string& payload) {
  std::string record;
  append_record(record, payload, FooterStyle::PayloadCrc);
  append_raw(record);
}

}  // namespace rulestream
