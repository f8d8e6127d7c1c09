#pragma once

// A JobReport as one self-contained HTML page: the job, the rules table and the plots, with
// the style, the charting library, the data and the page's script all inline, so the page
// works offline and alone (no request leaves it). The job and the rules are HTML a reader
// (or a parser) sees without the script; the plots are canvases the script draws.
//
// Sections, for tests and readers: <section id="job">, <section id="rules"> (a <tr
// class="rule" data-configuration="..."> per rule), <section id="plots"> (a <section
// class="group" data-group="..."> per chart group, a <figure class="chart"> per chart), and
// <script type="application/json" id="report-data"> (report_json.hpp).

#include <ostream>
#include <string_view>

#include "apps/report/job_report.hpp"

namespace rulestream {

// `chart_library` is Chart.js 3's UMD source (chart_library.hpp). std::invalid_argument when
// it would break its <script> element.
void write_report_html(const JobReport& report, std::string_view chart_library, std::ostream& out);

}  // namespace rulestream
