#pragma once

// The charting library a report page inlines: Chart.js 3's UMD build (it defines window.Chart)
// from Debian's libjs-chart.js, read from its installed file each time a page is made, never
// copied into the repository. Where it is: $RULESTREAM_CHARTJS, else the file CMake found at
// configure time (RULESTREAM_CHARTJS_PATH, by default
// /usr/share/javascript/chart.js/chart.min.js).

#include <string>

namespace rulestream {

// The path a page would read the library from now.
std::string chart_library_path();

// The library's source, checked for what would break the page's <script> element. Throws
// StorageError naming the path and the package to install when the file cannot be read, and
// std::invalid_argument when it is not Chart.js 3 (no "Chart.js v3" banner).
std::string load_chart_library();

}  // namespace rulestream
