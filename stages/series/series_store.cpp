#include "stages/series/series_store.hpp"

#include <algorithm>

#include "stages/series/restart_rule.hpp"

namespace rulestream {
namespace {

// Wall times taken for dates: 2001-09-09 (1e9 s) to 2100-01-01.
constexpr double kEarliestDate = 1e9;
constexpr double kLatestDate = 4102444800.0;

}  // namespace

RunSeries::RunSeries(std::string run, const SeriesStoreOptions& options)
    : run_(std::move(run)), options_(options) {}

StoredSeries& RunSeries::series_of(const SeriesTag& tag) {
  if (last_tag_ == &tag && last_series_->tag == tag.name) return *last_series_;
  auto found = by_name_.find(tag.name);
  if (found == by_name_.end()) {
    StoredSeries& added = tags_.emplace_back();
    added.run = run_;
    added.tag = tag.name;
    added.kind = tag.kind;
    added.plugin_name = tag.plugin_name;
    added.values_kept = !options_.keep_values || options_.keep_values(run_, tag.name);
    found = by_name_.emplace(added.tag, &added).first;
  }
  last_tag_ = &tag;
  last_series_ = found->second;
  return *last_series_;
}

void RunSeries::on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                         const SummaryReading& reading) {
  StoredSeries& series = series_of(tag);
  if (series.values_read == 0) series.first_step = step;
  ++series.values_read;
  series.last_step = step;
  if (wall_time >= kEarliestDate && wall_time <= kLatestDate) {
    if (!dated_span_) {
      dated_span_.emplace(wall_time, wall_time);
    } else {
      dated_span_->first = std::min(dated_span_->first, wall_time);
      dated_span_->second = std::max(dated_span_->second, wall_time);
    }
  }
  if (!series.values_kept) return;
  if (options_.order == KeptOrder::AsWritten) {
    series.as_written.push_back({step, wall_time, reading});
    return;
  }
  if (reading.kind != series.kind) return;
  if (reading.kind == TagKind::Scalar) {
    series.preempted +=
        keep_by_restart_rule(series.scalars, StoredScalar{step, wall_time, reading.scalar});
  } else if (reading.kind == TagKind::Histogram) {
    series.preempted += keep_by_restart_rule(series.histograms,
                                             StoredHistogram{step, wall_time, reading.histogram});
  }
}

const StoredSeries* RunSeries::find(const std::string& tag) const {
  const auto found = by_name_.find(tag);
  return found == by_name_.end() ? nullptr : found->second;
}

SeriesStore::SeriesStore(SeriesStoreOptions options) : options_(std::move(options)) {}

RunSeries& SeriesStore::run(const std::string& name) {
  const std::lock_guard lock(mutex_);
  auto found = runs_.find(name);
  if (found == runs_.end()) {
    found = runs_.emplace(name, std::make_unique<RunSeries>(name, options_)).first;
  }
  return *found->second;
}

void SeriesStore::Router::on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                                   const SummaryReading& reading) {
  if (last_ == nullptr || last_->run() != tag.run) last_ = &store_.run(tag.run);
  last_->on_value(tag, step, wall_time, reading);
}

std::vector<const RunSeries*> SeriesStore::runs() const {
  const std::lock_guard lock(mutex_);
  std::vector<const RunSeries*> runs;
  runs.reserve(runs_.size());
  for (const auto& [name, run] : runs_) runs.push_back(run.get());
  return runs;
}

std::vector<std::string> SeriesStore::run_names() const {
  const std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  names.reserve(runs_.size());
  for (const auto& [name, run] : runs_) names.push_back(name);
  return names;
}

const StoredSeries* SeriesStore::find(const std::string& run, const std::string& tag) const {
  const std::lock_guard lock(mutex_);
  const auto found = runs_.find(run);
  return found == runs_.end() ? nullptr : found->second->find(tag);
}

const RunSeries* SeriesStore::find_run(const std::string& run) const {
  const std::lock_guard lock(mutex_);
  const auto found = runs_.find(run);
  return found == runs_.end() ? nullptr : found->second.get();
}

std::optional<std::pair<double, double>> SeriesStore::dated_span() const {
  std::optional<std::pair<double, double>> span;
  for (const RunSeries* run : runs()) {
    const auto& own = run->dated_span();
    if (!own) continue;
    if (!span) {
      span = own;
    } else {
      span->first = std::min(span->first, own->first);
      span->second = std::max(span->second, own->second);
    }
  }
  return span;
}

SeriesJobRead read_into_store(const Storage& storage, SeriesStore& store,
                              const SeriesReadOptions& options, const SeriesFormat& format) {
  SeriesJobRead read = read_series_job(storage, store.sink(), options, format);
  for (const std::string& run : read.runs) store.run(run);
  return read;
}

}  // namespace rulestream
