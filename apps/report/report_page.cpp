#include "apps/report/report_page.hpp"

#include "apps/report/chart_library.hpp"
#include "apps/report/html_report.hpp"
#include "apps/report/report_builder.hpp"

namespace rulestream {

JobReport write_report_page(PipelineConfig config, std::ostream& out) {
  const std::string chart_library = load_chart_library();
  JobReport report = build_job_report(std::move(config));
  write_report_html(report, chart_library, out);
  return report;
}

}  // namespace rulestream
