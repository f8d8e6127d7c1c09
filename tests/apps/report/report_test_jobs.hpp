#pragma once

// The jobs the report tests make pages of, and their pages, made through the library.

#include <boost/json/value.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/report/job_report.hpp"
#include "engine/graph/pipeline_config.hpp"

namespace rulestream::testing {

// simulate: VanishingGradients, 2 workers, 60 TRAIN steps saved at every step, fault at 30,
// 3 layers (the simulator's defaults).
constexpr std::int64_t kVanishingSteps = 60;
constexpr std::int64_t kVanishingFault = 30;
void write_vanishing_job(const std::filesystem::path& folder);

// simulate --format tensorboard: Exploding, `steps` steps, fault at `fault`.
void write_exploding_logdir(const std::filesystem::path& folder, std::int64_t steps,
                            std::int64_t fault);

// The page of `path` with the default rules, as `rulestream report` writes it.
// `rules`: those to run (none: the report's defaults for the format).
std::string report_page(const std::filesystem::path& path, JobReport* report = nullptr,
                        std::vector<RuleConfig> rules = {});

// The JSON of the page's <script id="report-data">.
boost::json::value page_data(const std::string& html);

}  // namespace rulestream::testing
