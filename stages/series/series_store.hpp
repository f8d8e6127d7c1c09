#pragma once

// The series of a job of a series format (a TensorBoard logdir, a folder of text metrics) as its
// loaders read them: per run and tag, what the tag is and how many values were read, and its
// scalar or histogram values with TensorBoard's restart rule applied once, as they land
// (restart_rule.hpp). The one place values are kept for what shows them: the report's charts and
// summary, Python's TensorBoardTrial, `inspect` (tags and counts; --tag's values as written).
// A replay that is asked to (SeriesPipeline::keep_series) fills it as it judges, so a report
// reads the job once.
//
// Concurrency: run() may be called from any thread; the RunSeries it returns is fed by one thread
// at a time (a run is read by one thread), and is read once nothing feeds it any more. The
// store's sink() is for one reading thread (read_series_job).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/storage.hpp"
#include "stages/format/tensorboard_event.hpp"
#include "stages/series/run_loader.hpp"
#include "stages/series/series_format.hpp"
#include "stages/series/series_reader.hpp"

namespace rulestream {

struct StoredScalar {
  std::int64_t step = 0;
  double wall_time = 0.0;  // NaN where the format holds no time for the value
  double value = 0.0;      // float32 values widened exactly
};

struct StoredHistogram {
  std::int64_t step = 0;
  double wall_time = 0.0;
  HistogramFigures figures;
};

// A value as written, whatever its kind (KeptOrder::AsWritten).
struct StoredReading {
  std::int64_t step = 0;
  double wall_time = 0.0;
  SummaryReading reading;
};

// One tag of one run.
struct StoredSeries {
  std::string run;
  std::string tag;
  TagKind kind = TagKind::Other;  // its first value's
  std::string plugin_name;        // from its first value's metadata; empty when none
  // Every value read, whatever its kind, preempted ones included, and the steps of the first
  // and the last in file order.
  std::uint64_t values_read = 0;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  // Whether its values are kept (SeriesStoreOptions::keep_values).
  bool values_kept = true;
  // Values a later one at the same or an earlier step dropped (KeptOrder::TensorBoard).
  std::size_t preempted = 0;
  // KeptOrder::TensorBoard: the values of a scalar or a histogram tag whose values are kept,
  // those of the tag's own kind only (a "scalars" tensor of two elements under a scalar tag is
  // left out, as TensorBoard leaves it out); steps rise strictly.
  std::vector<StoredScalar> scalars;
  std::vector<StoredHistogram> histograms;
  // KeptOrder::AsWritten: every value of a tag whose values are kept, whatever its kind, in
  // file order, duplicates and restarts included.
  std::vector<StoredReading> as_written;
};

enum class KeptOrder {
  TensorBoard,  // what TensorBoard shows: the restart rule applied
  AsWritten,    // what the files hold (inspect --tag)
};

struct SeriesStoreOptions {
  KeptOrder order = KeptOrder::TensorBoard;
  // Whether a tag's values are kept (run, tag); null keeps every tag's. Tags whose values are
  // not kept are still listed and counted.
  std::function<bool(const std::string& run, const std::string& tag)> keep_values;
};

// One run's tags, fed by the run's loader.
class RunSeries final : public SeriesValueSink {
 public:
  RunSeries(std::string run, const SeriesStoreOptions& options);

  void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override;

  const std::string& run() const { return run_; }
  // In order of first appearance in the run.
  const std::deque<StoredSeries>& tags() const { return tags_; }
  const StoredSeries* find(const std::string& tag) const;
  // The earliest and latest wall time of the run's values that are dates (1e9 s, 2001-09-09, to
  // 2100-01-01): not a value without a time (NaN), nor seconds since a run's start (a log's
  // elapsed-time column), nor a time no clock gives (a corrupt record's).
  const std::optional<std::pair<double, double>>& dated_span() const { return dated_span_; }

 private:
  StoredSeries& series_of(const SeriesTag& tag);

  std::string run_;
  const SeriesStoreOptions& options_;
  std::deque<StoredSeries> tags_;  // addresses stable as tags are added
  std::map<std::string, StoredSeries*, std::less<>> by_name_;
  // Values of one tag come in runs: the last tag seen answers most of them. Its loader's
  // address alone is not enough: another loader of the run may reuse it, so the name is
  // compared too.
  const SeriesTag* last_tag_ = nullptr;
  StoredSeries* last_series_ = nullptr;
  std::optional<std::pair<double, double>> dated_span_;
};

class SeriesStore {
 public:
  explicit SeriesStore(SeriesStoreOptions options = {});
  SeriesStore(const SeriesStore&) = delete;
  SeriesStore& operator=(const SeriesStore&) = delete;

  // The run of that name, added empty at the first call (a run with no values is a run too).
  // Any thread.
  RunSeries& run(const std::string& name);
  // A sink that hands each value to its run's RunSeries (for read_series_job: one thread).
  SeriesValueSink& sink() { return router_; }

  // Every run, in run-name order. Once nothing feeds the store.
  std::vector<const RunSeries*> runs() const;
  std::vector<std::string> run_names() const;
  const StoredSeries* find(const std::string& run, const std::string& tag) const;
  // The run of that name; null when no file of it was read.
  const RunSeries* find_run(const std::string& run) const;
  // The runs' dated spans together (RunSeries::dated_span).
  std::optional<std::pair<double, double>> dated_span() const;

 private:
  class Router final : public SeriesValueSink {
   public:
    explicit Router(SeriesStore& store) : store_(store) {}
    void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                  const SummaryReading& reading) override;

   private:
    SeriesStore& store_;
    RunSeries* last_ = nullptr;
  };

  SeriesStoreOptions options_;
  mutable std::mutex mutex_;  // guards runs_' shape, not what a RunSeries holds
  std::map<std::string, std::unique_ptr<RunSeries>, std::less<>> runs_;
  Router router_{*this};
};

// Reads every file of `format` under `storage`'s root into `store` (read_series_job), every run
// listed in it, those with no values too.
SeriesJobRead read_into_store(const Storage& storage, SeriesStore& store,
                              const SeriesReadOptions& options, const SeriesFormat& format);

}  // namespace rulestream
