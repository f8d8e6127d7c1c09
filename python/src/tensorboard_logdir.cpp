#include "python/src/tensorboard_logdir.hpp"

#include "engine/graph/job.hpp"
#include "engine/graph/trial_presence.hpp"

namespace rulestream::python {
TensorBoardLogdir::TensorBoardLogdir(const Storage& storage, TrialFormat format)
    : path_(storage.describe()) {
  const SeriesJobRead read = read_into_store(storage, store_, {}, series_format_of(format));
  runs_ = read.runs;
  for (const RunSeries* run : store_.runs()) {
    for (const StoredSeries& series : run->tags()) {
      const bool values = series.kind == TagKind::Scalar || series.kind == TagKind::Histogram;
      (values ? series_ : other_tags_).push_back(&series);
    }
  }
  for (const SeriesProblem& problem : read.problems) problems_.push_back(problem.message);
}

std::optional<TrialFormat> series_format_held(const Storage& storage) {
  const std::optional<TrialFormat> format = detect_format(storage);
  if (format == TrialFormat::Smdebug) return std::nullopt;
  return format;
}

}  // namespace rulestream::python
