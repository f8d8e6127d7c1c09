#include "python/src/tensorboard_logdir.hpp"

#include <map>
#include <utility>

#include "engine/graph/job.hpp"
#include "engine/graph/trial_presence.hpp"
#include "stages/tensorboard/logdir_reader.hpp"
#include "stages/tensorboard/restart_rule.hpp"

namespace rulestream::python {
namespace {

// Collects each scalar and histogram tag's values into its series, applying TensorBoard's rule
// for steps that go back as they arrive; remembers the other tags.
class SeriesCollector final : public TensorBoardValueSink {
 public:
  void on_value(const TensorBoardTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    const std::size_t at = entry_of(tag);
    if (at == kNotSeries || reading.kind != tag.kind) return;
    TensorBoardSeries& series = series_[at];
    series.preempted += keep_by_restart_rule(
        series.points, TensorBoardPoint{step, wall_time, reading.scalar, reading.histogram});
  }

  std::vector<TensorBoardSeries> series_;
  std::vector<TensorBoardOtherTag> other_tags_;

 private:
  static constexpr std::size_t kNotSeries = static_cast<std::size_t>(-1);

  // The series of `tag` (added at its first value), or kNotSeries for another kind of tag.
  // Values of one tag come in runs, so the last tag seen answers most of them.
  std::size_t entry_of(const TensorBoardTag& tag) {
    if (last_tag_ == &tag && last_run_ == tag.run && last_name_ == tag.name) return last_entry_;
    auto [found, added] = by_name_.try_emplace({tag.run, tag.name}, kNotSeries);
    if (added) {
      if (tag.kind == TagKind::Scalar || tag.kind == TagKind::Histogram) {
        found->second = series_.size();
        series_.push_back({tag.run, tag.name, tag.kind, {}, 0});
      } else {
        other_tags_.push_back({tag.run, tag.name, tag.kind});
      }
    }
    // The reader's tags live while it reads a run, and a later run's may take the same
    // address: the name is compared too.
    last_tag_ = &tag;
    last_run_ = tag.run;
    last_name_ = tag.name;
    last_entry_ = found->second;
    return last_entry_;
  }

  std::map<std::pair<std::string, std::string>, std::size_t> by_name_;  // (run, tag)
  const TensorBoardTag* last_tag_ = nullptr;
  std::string last_run_;
  std::string last_name_;
  std::size_t last_entry_ = kNotSeries;
};

}  // namespace

TensorBoardLogdir::TensorBoardLogdir(const Storage& storage, TrialFormat format)
    : path_(storage.describe()) {
  SeriesCollector collector;
  const LogdirRead read = read_logdir(storage, collector, {}, series_format_of(format));
  runs_ = read.runs;
  series_ = std::move(collector.series_);
  other_tags_ = std::move(collector.other_tags_);
  for (const TensorBoardProblem& problem : read.problems) problems_.push_back(problem.message);
}

std::optional<TrialFormat> series_format_held(const Storage& storage) {
  const std::optional<TrialFormat> format = detect_format(storage);
  if (format == TrialFormat::Smdebug) return std::nullopt;
  return format;
}

}  // namespace rulestream::python
