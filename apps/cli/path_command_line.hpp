#pragma once

#include <boost/program_options.hpp>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace rulestream::cli {

// The command line of a command that takes PATH... and the options `visible` describes
// (watch, replay, report): the options parsed, or the exit status when the command is already
// done: --help printed to `out` (0), or a usage error said on `err` after `prefix` (2). A
// missing PATH is the caller's to report (each says what PATH should be).
std::variant<boost::program_options::variables_map, int> parse_path_command_line(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& visible, const std::string& prefix,
    std::ostream& out, std::ostream& err);

}  // namespace rulestream::cli
