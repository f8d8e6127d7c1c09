#include "apps/report/format_sections.hpp"

#include "apps/report/job_summary.hpp"
#include "apps/report/smdebug_charts.hpp"
#include "apps/report/tensorboard_charts.hpp"
#include "stages/tensorboard/logdir_reader.hpp"

namespace rulestream {
namespace {

void add_smdebug_sections(const Trial& trial, std::span<const std::int64_t> firing_steps,
                          JobReport& report) {
  report.job = summarize_trial(trial);
  report.charts = smdebug_charts(trial, firing_steps);
}

// A job of a series format (a TensorBoard logdir, a folder of text metrics): its series charted.
void add_series_sections(const PipelineConfig& config, const Storage& storage, TrialFormat format,
                         std::span<const std::int64_t> firing_steps, JobReport& report) {
  SeriesNaming naming = SeriesNaming::defaults();
  for (const auto& [key, patterns] : config.tensorboard_names) naming.replace(key, patterns);
  TensorBoardSeriesCollector collector;
  const LogdirRead read = read_logdir(storage, collector, {}, series_format_of(format));
  report.job.path = config.paths.front();
  report.job.format = format == TrialFormat::TextMetrics ? "text metrics" : "TensorBoard";
  report.job.workers = read.runs;
  collector.summarize(naming, report.job);
  report.charts = collector.charts(naming, firing_steps);
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
      add_series_sections(config, storage, job.format(), firing_steps, report);
      return;
  }
}

}  // namespace rulestream
