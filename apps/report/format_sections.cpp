#include "apps/report/format_sections.hpp"

#include <memory>

#include "apps/report/job_summary.hpp"
#include "apps/report/series_charts.hpp"
#include "apps/report/smdebug_charts.hpp"
#include "stages/series/series_store.hpp"

namespace rulestream {
namespace {

void add_smdebug_sections(const Trial& trial, std::span<const std::int64_t> firing_steps,
                          JobReport& report) {
  report.job = summarize_trial(trial);
  report.charts = smdebug_charts(trial, firing_steps);
}

// A job of a series format (a TensorBoard logdir, a folder of text metrics): its series charted,
// from what the job kept as it read them (config.keep_series), or else read once more.
void add_series_sections(const Job& job, const PipelineConfig& config, const Storage& storage,
                         std::span<const std::int64_t> firing_steps, JobReport& report) {
  SeriesNaming naming = SeriesNaming::defaults();
  for (const auto& [key, patterns] : config.tensorboard_names) naming.replace(key, patterns);
  std::unique_ptr<SeriesStore> read_again;
  const SeriesStore* store = job.series();
  if (store == nullptr) {
    read_again = std::make_unique<SeriesStore>();
    read_into_store(storage, *read_again, {}, series_format_of(job.format()));
    store = read_again.get();
  }
  report.job.path = config.paths.front();
  report.job.format = std::string(series_format_of(job.format()).format_label);
  report.job.workers = store->run_names();
  summarize_series(*store, naming, report.job);
  report.charts = series_charts(*store, naming, firing_steps);
}

}  // namespace

void add_format_sections(const Job& job, const PipelineConfig& config, const Storage& storage,
                         std::span<const std::int64_t> firing_steps, JobReport& report) {
  switch (job.format()) {
    case TrialFormat::Smdebug:
      add_smdebug_sections(*job.trial(), firing_steps, report);
      return;
    case TrialFormat::TensorBoard:
    case TrialFormat::TextMetrics:
      add_series_sections(job, config, storage, firing_steps, report);
      return;
  }
}

}  // namespace rulestream
