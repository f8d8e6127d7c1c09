// `rulestream report` through cli::run: exit statuses, the page in place (never half written),
// errors on one line.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "apps/cli/cli.hpp"
#include "tests/apps/report/report_test_jobs.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

TEST(ReportCliTest, WritesThePageAndExitsOneWhenARuleFired) {
  TempDir dir;
  write_vanishing_job(dir.path() / "job");
  const auto page = dir.path() / "report.html";
  const CliOutcome outcome = run_cli("report", {(dir.path() / "job").string(), "--rule",
                                                "VanishingGradient", "-o", page.string()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  EXPECT_TRUE(std::filesystem::exists(page));
  EXPECT_FALSE(std::filesystem::exists(page.string() + ".partial"));
  EXPECT_NE(outcome.err.find("VanishingGradient (VanishingGradient): IssuesFound, fired 30 times"),
            std::string::npos)
      << outcome.err;
  EXPECT_NE(read_text_file(page).find("data-configuration=\"VanishingGradient\""),
            std::string::npos);
}

TEST(ReportCliTest, ExitsZeroWhenNoRuleFired) {
  TempDir dir;
  write_vanishing_job(dir.path() / "job");
  const auto page = dir.path() / "report.html";
  // A threshold below the vanished gradients' abs-mean (~1e-10): nothing fires.
  const CliOutcome outcome =
      run_cli("report", {(dir.path() / "job").string(), "--rule",
                         "VanishingGradient:threshold=1e-12", "-o", page.string()});
  EXPECT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  EXPECT_TRUE(std::filesystem::exists(page));
}

TEST(ReportCliTest, ErrorsNameWhatIsWrongAndWriteNothing) {
  TempDir dir;
  const auto page = dir.path() / "report.html";
  expect_one_line_error(run_cli("report", {(dir.path()).string()}), "report", {"missing -o"});
  expect_one_line_error(run_cli("report", {"-o", page.string()}), "report", {"missing PATH"});
  expect_one_line_error(run_cli("report", {(dir.path() / "nowhere").string(), "-o", page.string()}),
                        "report", {"nowhere"});
  write_vanishing_job(dir.path() / "job");
  expect_one_line_error(run_cli("report", {(dir.path() / "job").string(), "--rule", "NoSuchRule",
                                           "-o", page.string()}),
                        "report", {"NoSuchRule"});
  EXPECT_FALSE(std::filesystem::exists(page));
  EXPECT_FALSE(std::filesystem::exists(page.string() + ".partial"));
}

TEST(ReportCliTest, MissingChartingLibraryIsNamedBeforeAnythingIsRead) {
  TempDir dir;
  write_vanishing_job(dir.path() / "job");
  const auto page = dir.path() / "report.html";
  const std::string missing = (dir.path() / "no-chart.min.js").string();
  ::setenv("RULESTREAM_CHARTJS", missing.c_str(), 1);
  const CliOutcome outcome =
      run_cli("report", {(dir.path() / "job").string(), "-o", page.string()});
  ::unsetenv("RULESTREAM_CHARTJS");
  expect_one_line_error(outcome, "report", {missing, "libjs-chart.js"});
  EXPECT_FALSE(std::filesystem::exists(page));
}

}  // namespace
}  // namespace rulestream::testing
