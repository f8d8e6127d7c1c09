#pragma once

// The report page's own style sheet and script (the charting library comes from
// chart_library.hpp). The script reads the JSON of <script id="report-data"> (report_json.hpp),
// draws a Chart.js chart into each <canvas data-chart="I"> (chart I of the JSON), marks the
// rules' firing steps on the charts that ask for it, and when done sets
// document.body.dataset.renderMs (how long drawing took) and readyMs (milliseconds from the
// navigation's start to the last chart drawn), which benchmarks/report_e2e.cpp reads.

#include <string_view>

namespace rulestream {

std::string_view report_page_style();
std::string_view report_page_script();

}  // namespace rulestream
