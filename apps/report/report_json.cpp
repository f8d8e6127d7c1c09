#include "apps/report/report_json.hpp"

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "core/model/utc_time.hpp"

namespace rulestream {
namespace {

boost::json::value plot_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return std::strtod(text, nullptr);
}

std::string_view kind_name(ChartLine::Kind kind) {
  switch (kind) {
    case ChartLine::Kind::Line:
      return "line";
    case ChartLine::Kind::BandLow:
      return "band_low";
    case ChartLine::Kind::BandHigh:
      return "band_high";
    case ChartLine::Kind::Count:
      return "count";
  }
  return "line";
}

boost::json::object job_json(const JobSummary& job) {
  boost::json::object out;
  out["path"] = job.path;
  out["format"] = job.format;
  boost::json::array workers;
  for (const auto& worker : job.workers) workers.emplace_back(worker);
  out["workers"] = std::move(workers);
  boost::json::object modes;
  for (const auto& [mode, range] : job.steps_by_mode) {
    modes[mode] = {{"count", range.count}, {"first", range.first}, {"last", range.last}};
  }
  out["steps_by_mode"] = std::move(modes);
  if (job.first_time) out["first_time"] = iso8601_utc_seconds(*job.first_time);
  if (job.last_time) out["last_time"] = iso8601_utc_seconds(*job.last_time);
  out["ended"] = job.ended ? boost::json::value(*job.ended) : boost::json::value(nullptr);
  boost::json::array problems;
  for (const auto& problem : job.problems) problems.emplace_back(problem);
  out["problems"] = std::move(problems);
  return out;
}

boost::json::object rule_json(const RuleOutcome& rule) {
  boost::json::object out;
  out["configuration"] = rule.configuration;
  out["rule"] = rule.rule;
  out["status"] = rule.status;
  out["firings"] = rule.firings;
  out["first_step"] = rule.first_step ? boost::json::value(*rule.first_step) : nullptr;
  out["last_step"] = rule.last_step ? boost::json::value(*rule.last_step) : nullptr;
  out["finding"] = rule.finding;
  boost::json::array steps;
  for (const auto step : rule.firing_steps) steps.emplace_back(step);
  out["steps"] = std::move(steps);
  return out;
}

boost::json::object chart_json(const Chart& chart) {
  boost::json::object out;
  out["group"] = chart.group;
  out["title"] = chart.title;
  out["marks_firings"] = chart.marks_firings;
  boost::json::array lines;
  for (const ChartLine& line : chart.lines) {
    boost::json::array steps, values;
    for (const auto& point : line.points) {
      steps.emplace_back(point.step);
      values.push_back(plot_value(point.value));
    }
    lines.push_back(boost::json::object{{"label", line.label},
                                        {"kind", kind_name(line.kind)},
                                        {"original_points", line.original_points},
                                        {"steps", std::move(steps)},
                                        {"values", std::move(values)}});
  }
  out["lines"] = std::move(lines);
  return out;
}

}  // namespace

boost::json::value report_json(const JobReport& report) {
  boost::json::object out;
  out["job"] = job_json(report.job);
  boost::json::array rules;
  for (const auto& rule : report.rules) rules.push_back(rule_json(rule));
  out["rules"] = std::move(rules);
  boost::json::array charts;
  for (const auto& chart : report.charts) charts.push_back(chart_json(chart));
  out["charts"] = std::move(charts);
  out["generated"] = iso8601_utc_seconds(report.generated);
  return out;
}

}  // namespace rulestream
