#include "apps/report/html_report.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "apps/report/page_assets.hpp"
#include "apps/report/report_json.hpp"
#include "apps/report/script_text.hpp"
#include "core/model/utc_time.hpp"

namespace rulestream {
namespace {

void fact(std::ostream& out, std::string_view name, const std::string& value) {
  out << "<tr><th>" << name << "</th><td>" << html_escape(value) << "</td></tr>\n";
}

std::string duration_text(std::chrono::system_clock::duration span) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(span).count();
  if (seconds < 60) {
    // A short job (a demo, a test) would read "0 h 0 min 0 s".
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(span).count());
    return text;
  }
  return std::to_string(seconds / 3600) + " h " + std::to_string(seconds / 60 % 60) + " min " +
         std::to_string(seconds % 60) + " s";
}

void write_job(const JobSummary& job, std::ostream& out) {
  out << "<section id=\"job\">\n<h2>Job</h2>\n<table class=\"facts\">\n";
  fact(out, "Path", job.path);
  fact(out, "Format", job.format);
  std::string workers = std::to_string(job.workers.size());
  for (std::size_t i = 0; i < job.workers.size(); ++i) {
    workers += (i == 0 ? ": " : ", ") + job.workers[i];
  }
  fact(out, job.format == "TensorBoard" ? "Runs" : "Workers", workers);
  std::string steps;
  for (const auto& [mode, range] : job.steps_by_mode) {
    if (!steps.empty()) steps += "; ";
    steps += mode + ": " + std::to_string(range.count) + " steps (" + std::to_string(range.first) +
             " to " + std::to_string(range.last) + ")";
  }
  fact(out, "Steps", steps.empty() ? "none" : steps);
  if (job.first_time && job.last_time) {
    fact(out, "Time span",
         iso8601_utc_seconds(*job.first_time) + " to " + iso8601_utc_seconds(*job.last_time) +
             " (" + duration_text(*job.last_time - *job.first_time) + ")");
  } else {
    fact(out, "Time span", "unknown");
  }
  fact(out, "Ended",
       job.ended ? (*job.ended ? "yes (end-of-job marker written)" : "no end-of-job marker yet")
                 : "unknown (TensorBoard logdirs have no end marker)");
  fact(out, "Problems", std::to_string(job.problems.size()));
  out << "</table>\n";
  if (!job.problems.empty()) {
    out << "<ul class=\"problems\">\n";
    for (const auto& problem : job.problems) out << "<li>" << html_escape(problem) << "</li>\n";
    out << "</ul>\n";
  }
  out << "</section>\n";
}

std::string optional_step(const std::optional<std::int64_t>& step) {
  return step ? std::to_string(*step) : "-";
}

// What the rules found, first: one line a problem, what it is and what to do.
void write_verdicts(const std::vector<Verdict>& verdicts, std::ostream& out) {
  out << "<section id=\"verdicts\">\n<h2>Verdicts</h2>\n";
  if (verdicts.empty()) {
    out << "<p class=\"verdict-none\">No rule found an issue (the rules table says what each "
           "judged).</p>\n</section>\n";
    return;
  }
  out << "<ol class=\"verdicts\">\n";
  for (const Verdict& verdict : verdicts) {
    out << "<li class=\"verdict\" data-configuration=\"" << html_escape(verdict.configuration)
        << "\"><strong>" << html_escape(verdict.configuration) << "</strong>, step "
        << verdict.first_step;
    if (verdict.last_step != verdict.first_step) out << "-" << verdict.last_step;
    out << " (" << verdict.firings << (verdict.firings == 1 ? " firing" : " firings");
    if (!verdict.resolution.empty()) out << "; " << html_escape(verdict.resolution);
    out << "): " << html_escape(verdict.message) << "</li>\n";
  }
  out << "</ol>\n</section>\n";
}

void write_rules(const std::vector<RuleOutcome>& rules, std::ostream& out) {
  out << "<section id=\"rules\">\n<h2>Rules</h2>\n<table>\n<thead><tr><th>Rule</th>"
         "<th>Status</th><th>Firings</th><th>First step</th><th>Last step</th><th>Finding</th>"
         "</tr></thead>\n<tbody>\n";
  for (const RuleOutcome& rule : rules) {
    std::string name = rule.configuration;
    if (rule.rule != rule.configuration) name += " (" + rule.rule + ")";
    out << "<tr class=\"rule\" data-configuration=\"" << html_escape(rule.configuration)
        << "\"><td>" << html_escape(name) << "</td><td class=\"status status-"
        << html_escape(rule.status) << "\">" << html_escape(rule.status)
        << "</td><td class=\"number\">" << rule.firings << "</td><td class=\"number\">"
        << optional_step(rule.first_step) << "</td><td class=\"number\">"
        << optional_step(rule.last_step) << "</td><td>" << html_escape(rule.finding)
        << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n</section>\n";
}

void write_plots(const std::vector<Chart>& charts, std::ostream& out) {
  out << "<section id=\"plots\">\n<h2>Plots</h2>\n";
  if (charts.empty()) out << "<p>Nothing in this job can be plotted.</p>\n";
  // Groups in the order their first chart comes (losses first), charts in their order.
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < charts.size(); ++i) {
    auto& list = members[charts[i].group];
    if (list.empty()) groups.push_back(charts[i].group);
    list.push_back(i);
  }
  for (const auto& group : groups) {
    out << "<section class=\"group group-" << html_escape(group) << "\" data-group=\""
        << html_escape(group) << "\">\n<h3>" << html_escape(group)
        << "</h3>\n<div class=\"charts\">\n";
    for (const std::size_t i : members[group]) {
      out << "<figure class=\"chart\" data-title=\"" << html_escape(charts[i].title)
          << "\"><figcaption>" << html_escape(charts[i].title)
          << "</figcaption><div class=\"plot\"><canvas data-chart=\"" << i
          << "\"></canvas></div></figure>\n";
    }
    out << "</div>\n</section>\n";
  }
  out << "<p class=\"note\">Long series are downsampled for plotting: each of about 1,000 "
         "buckets keeps its lowest and highest values and its NaN and infinite stretches, and "
         "every step where a rule fired is kept. On the losses, red lines and markers show the "
         "steps where a rule fired (a red rug along the top where they are too many to draw "
         "apart). Hover over a curve for its step and value.</p>\n</section>\n";
}

}  // namespace

void write_report_html(const JobReport& report, std::string_view chart_library, std::ostream& out) {
  checked_script_source(chart_library, "the charting library");
  const std::string_view script = checked_script_source(report_page_script(), "the page script");
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         // Nothing may leave the page: no fetch, no image, no font from elsewhere.
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
         "<title>rulestream report: "
      << html_escape(report.job.path) << "</title>\n<style>" << report_page_style()
      << "</style>\n</head>\n<body>\n<header><h1>rulestream report</h1><p>"
      << html_escape(report.job.path) << " &middot; made " << iso8601_utc_seconds(report.generated)
      << "</p></header>\n";
  write_verdicts(report.verdicts, out);
  write_job(report.job, out);
  write_rules(report.rules, out);
  write_plots(report.charts, out);
  out << "<script type=\"application/json\" id=\"report-data\">"
      << script_safe_json(report_json(report)) << "</script>\n<script>" << chart_library
      << "</script>\n<script>" << script << "</script>\n</body>\n</html>\n";
}

}  // namespace rulestream
