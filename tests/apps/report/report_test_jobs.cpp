#include "tests/apps/report/report_test_jobs.hpp"

#include <boost/json.hpp>
#include <sstream>
#include <stdexcept>

#include "apps/report/report_page.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "apps/simulator/tensorboard_simulator.hpp"
#include "tests/apps/report/html_document.hpp"

namespace rulestream::testing {

void write_vanishing_job(const std::filesystem::path& folder) {
  JobSimulatorOptions options;
  options.output = folder;
  options.scenario = JobScenario::VanishingGradients;
  options.workers = 2;
  options.steps = kVanishingSteps;
  options.fault_step = kVanishingFault;
  JobSimulator(options).run();
}

void write_exploding_logdir(const std::filesystem::path& folder, std::int64_t steps,
                            std::int64_t fault) {
  TensorBoardSimulatorOptions options;
  options.output = folder;
  options.scenario = TensorBoardScenario::Exploding;
  options.steps = steps;
  options.fault_step = fault;
  simulate_tensorboard(options);
}

std::string report_page(const std::filesystem::path& path, JobReport* report,
                        std::vector<RuleConfig> rules) {
  PipelineConfig config;
  config.paths = {path.string()};
  config.rules = std::move(rules);
  std::ostringstream page;
  JobReport made = write_report_page(config, page);
  if (report != nullptr) *report = std::move(made);
  return std::move(page).str();
}

boost::json::value page_data(const std::string& html) {
  const HtmlDocument document(html);
  const auto scripts = document.texts("//script[@id='report-data']");
  if (scripts.size() != 1) throw std::runtime_error("no single report-data script in the page");
  return boost::json::parse(scripts.front());
}

}  // namespace rulestream::testing
