#include "apps/cli/path_command_line.hpp"

#include "apps/cli/cli.hpp"

namespace rulestream::cli {

namespace po = boost::program_options;

std::variant<po::variables_map, int> parse_path_command_line(const std::vector<std::string>& args,
                                                             const po::options_description& visible,
                                                             const std::string& prefix,
                                                             std::ostream& out, std::ostream& err) {
  po::options_description all;
  all.add(visible).add_options()("path", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("path", -1);
  po::variables_map options;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), options);
    po::notify(options);
  } catch (const po::error& error) {
    err << prefix << error.what() << "\n";
    return kExitError;
  }
  if (options.count("help")) {
    out << visible << "\n";
    return kExitOk;
  }
  return options;
}

}  // namespace rulestream::cli
