#pragma once

// A JobReport as the JSON document the page's script draws from (embedded in the page by
// html_report.cpp). The shape:
//   {"job": {...}, "rules": [{"configuration", "rule", "status", "firings", "first_step",
//    "last_step", "finding", "steps": [...]}], "charts": [{"group", "title", "marks_firings",
//    "lines": [{"label", "kind": "line"|"band_low"|"band_high"|"count", "original_points",
//    "steps": [...], "values": [...]}]}]}
// Values are rounded to 6 significant digits (a plot and its tooltip need no more, and a
// 100,000-step job stays light); NaN and infinities are the strings "NaN", "Infinity" and
// "-Infinity".

#include <boost/json/value.hpp>

#include "apps/report/job_report.hpp"

namespace rulestream {

boost::json::value report_json(const JobReport& report);

}  // namespace rulestream
