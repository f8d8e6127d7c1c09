// `rulestream report`: one self-contained HTML page for a job (apps/report/ makes it).
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "apps/cli/cli.hpp"
#include "apps/cli/commands.hpp"
#include "apps/cli/path_command_line.hpp"
#include "apps/cli/rule_cli_options.hpp"
#include "apps/cli/storage_cli_options.hpp"
#include "apps/report/report_page.hpp"
#include "core/model/exceptions.hpp"

namespace rulestream::cli {

namespace po = boost::program_options;

int run_report(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string prefix = "rulestream report: ";
  po::options_description visible(
      "rulestream report PATH [--rules FILE | --rule ...] -o report.html [options]\n\n"
      "Replays a job (an smdebug trial or a TensorBoard logdir, a folder or s3://bucket/prefix)\n"
      "with the rules (without any: the default set for its format) and writes one HTML page\n"
      "that works offline and alone: the job, a table of the rules with their firings, and the\n"
      "job's curves with the firing steps marked. The rules' events go to the page only; their\n"
      "stop and notify actions and any sinks are set aside. Exit status: 0 written and no rule\n"
      "fired, 1 written and a rule fired, 2 an error (nothing written), or written but some\n"
      "rule ended in Error.\n\noptions");
  visible.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>()->value_name("FILE"), "the page to write (required)");
  add_rule_options(visible);
  visible.add_options()("threads", po::value<int>()->value_name("N")->default_value(0),
                        "worker threads (0: all)");
  add_storage_options(visible);
  auto parsed = parse_path_command_line(args, visible, prefix, out, err);
  if (const int* done = std::get_if<int>(&parsed)) return *done;
  const po::variables_map& options = std::get<po::variables_map>(parsed);
  if (!options.count("path")) {
    err << prefix << "missing PATH (a trial folder or a TensorBoard logdir)\n";
    return kExitError;
  }
  if (!options.count("output")) {
    err << prefix << "missing -o FILE (where to write the page)\n";
    return kExitError;
  }
  const std::filesystem::path output = options["output"].as<std::string>();
  // Written beside the target and renamed into place: a failed run leaves no half page, and
  // an earlier page stays until the new one is whole.
  const std::filesystem::path partial = output.string() + ".partial";
  try {
    PipelineConfig config;
    config.paths = options["path"].as<std::vector<std::string>>();
    read_rule_options(options, config);
    config.threads = options["threads"].as<int>();
    config.storage = storage_options_from(options);
    std::ofstream page(partial, std::ios::binary | std::ios::trunc);
    if (!page) throw StorageError(partial.string() + ": cannot write the report");
    JobReport report;
    try {
      report = write_report_page(std::move(config), page);
      page.close();
      if (!page) throw StorageError(partial.string() + ": writing the report failed");
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      throw;
    }
    std::filesystem::rename(partial, output);
    bool fired = false;
    bool errors = false;
    for (const auto& rule : report.rules) {
      fired = fired || rule.firings > 0;
      errors = errors || rule.status == "Error";
      err << "  " << rule.configuration << " (" << rule.rule << "): " << rule.status << ", fired "
          << rule.firings << " times\n";
    }
    err << prefix << "wrote " << output.string() << " (" << std::filesystem::file_size(output)
        << " bytes, " << report.charts.size() << " charts)\n";
    if (errors) return kExitError;
    return fired ? kExitRuleFired : kExitOk;
  } catch (const RulestreamError& error) {
    err << prefix << error.what() << "\n";
  } catch (const std::invalid_argument& error) {
    err << prefix << error.what() << "\n";
  } catch (const std::filesystem::filesystem_error& error) {
    err << prefix << error.what() << "\n";
  }
  return kExitError;
}

}  // namespace rulestream::cli
