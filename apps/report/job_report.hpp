#pragma once

// What a report page shows about one job, as plain data: built by build_job_report
// (report_builder.hpp), written as HTML by render_report_html (html_report.hpp). Nothing here
// knows HTML, so a later `serve` can cache a JobReport and render it again.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rulestream {

// One point of a curve: a global step (a TensorBoard step) and its value, NaN and infinities
// kept (the page draws them as gaps and counts them).
struct SeriesPoint {
  std::int64_t step = 0;
  double value = 0.0;
};

// One curve of a chart. A band is drawn as the area between its `low` and `high` curves, which
// have the same steps.
struct ChartLine {
  enum class Kind { Line, BandLow, BandHigh, Count };
  std::string label;  // "train", "abs_mean", "workers' abs_mean (min)"
  Kind kind = Kind::Line;
  std::vector<SeriesPoint> points;  // in step order, already downsampled
  // How many points the series had before downsampling, for the page to say so.
  std::size_t original_points = 0;
};

// One plot. Charts of a group are drawn side by side as small multiples.
struct Chart {
  std::string group;  // "losses", "gradients", "weights", a TensorBoard tag prefix
  std::string title;  // the tensor or tag
  std::vector<ChartLine> lines;
  bool marks_firings = false;  // a loss: the rules' firing steps are marked on it
};

// What one configured rule did over the whole job.
struct RuleOutcome {
  std::string configuration;  // RuleConfigurationName
  std::string rule;           // the rule invoked
  std::string status;         // NoIssuesFound, IssuesFound, Error, NotApplicable
  // Conditions met: a series rule may fire more than once at a step (on two tags).
  std::int64_t firings = 0;
  std::optional<std::int64_t> first_step;
  std::optional<std::int64_t> last_step;
  std::string finding;                     // the first firing's message, else the status's message
  std::vector<std::int64_t> firing_steps;  // the step of every firing, in step order
};

// What happened, in words a person acts on: one incident of a rule (its firings on one series,
// grouped), or for a rule whose firings are not grouped, all of its firings. The report opens
// with these, in the order they began.
struct Verdict {
  std::string configuration;  // the rule configuration that found it
  std::string incident;       // its id; empty for a rule whose firings are not grouped
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  std::int64_t firings = 0;
  std::string message;     // the first firing's: what it is and what to do
  std::string resolution;  // how it ended ("cleared at step 594"); empty while unknown
};

struct StepRange {
  std::int64_t count = 0;
  std::int64_t first = 0;
  std::int64_t last = 0;
};

struct JobSummary {
  std::string path;
  std::string format;                              // "smdebug" or "TensorBoard"
  std::vector<std::string> workers;                // smdebug workers; TensorBoard runs
  std::map<std::string, StepRange> steps_by_mode;  // "TRAIN", "EVAL", ... (global steps)
  std::optional<std::chrono::system_clock::time_point> first_time;
  std::optional<std::chrono::system_clock::time_point> last_time;
  // Whether the job wrote its end marker; nullopt where the format has none (TensorBoard).
  std::optional<bool> ended;
  std::vector<std::string> problems;  // what was reported and skipped while reading
};

struct JobReport {
  std::vector<Verdict> verdicts;
  JobSummary job;
  std::vector<RuleOutcome> rules;
  std::vector<Chart> charts;
  std::chrono::system_clock::time_point generated;
};

}  // namespace rulestream
