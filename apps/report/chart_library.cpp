#include "apps/report/chart_library.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "apps/report/script_text.hpp"
#include "core/model/exceptions.hpp"

#ifndef RULESTREAM_CHARTJS_PATH
#define RULESTREAM_CHARTJS_PATH "/usr/share/javascript/chart.js/chart.min.js"
#endif

namespace rulestream {

std::string chart_library_path() {
  if (const char* path = std::getenv("RULESTREAM_CHARTJS"); path != nullptr && *path != '\0') {
    return path;
  }
  return RULESTREAM_CHARTJS_PATH;
}

std::string load_chart_library() {
  const std::string path = chart_library_path();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw StorageError(path +
                       ": cannot read the charting library a report inlines; install Debian's "
                       "libjs-chart.js, or set RULESTREAM_CHARTJS to Chart.js 3's chart.min.js");
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string source = std::move(text).str();
  // The banner is in the file's first comment: a page script written for Chart.js 3's API
  // would fail on another library or major version with nothing drawn and no error shown.
  if (source.substr(0, 200).find("Chart.js v3") == std::string::npos) {
    throw std::invalid_argument(path + ": not Chart.js 3 (its banner says no \"Chart.js v3\")");
  }
  checked_script_source(source, path);
  return source;
}

}  // namespace rulestream
