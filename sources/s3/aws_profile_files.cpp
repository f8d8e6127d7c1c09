#include "sources/s3/aws_profile_files.hpp"

#include <fstream>

namespace rulestream {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The AWS files are INI-like: [section], key = value, '#' or ';' comments. An indented line
// continues the previous key (nested settings such as "s3 =" blocks), which we do not need.
std::map<std::string, AwsProfile::Section> read_ini_file(const std::string& path) {
  std::map<std::string, AwsProfile::Section> file;
  std::ifstream in(path);
  if (!in) return file;
  std::string line;
  AwsProfile::Section* current = nullptr;
  while (std::getline(in, line)) {
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) continue;
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#' || text.front() == ';') continue;
    if (text.front() == '[') {
      const auto close = text.find(']');
      current = close == std::string_view::npos
                    ? nullptr
                    : &file[std::string(trim(text.substr(1, close - 1)))];
      continue;
    }
    const auto equals = text.find('=');
    if (current == nullptr || equals == std::string_view::npos) continue;
    (*current)[std::string(trim(text.substr(0, equals)))] =
        std::string(trim(text.substr(equals + 1)));
  }
  return file;
}

std::string home_file(const EnvironmentLookup& environment, std::string_view override_variable,
                      std::string_view default_name) {
  if (auto path = non_empty_variable(environment, override_variable)) return *path;
  const std::string home = non_empty_variable(environment, "HOME").value_or("");
  return home + "/.aws/" + std::string(default_name);
}

std::string value_in(const AwsProfile::Section& section, const std::string& key) {
  const auto it = section.find(key);
  return it == section.end() ? std::string() : it->second;
}

}  // namespace

std::string AwsProfile::get(const std::string& key) const {
  std::string value = value_in(credentials, key);
  return value.empty() ? value_in(config, key) : value;
}

std::string AwsProfile::where(const std::string& key) const {
  return value_in(credentials, key).empty() ? config_section : credentials_section;
}

AwsProfileFiles::AwsProfileFiles(const EnvironmentLookup& environment)
    : config_path_(home_file(environment, "AWS_CONFIG_FILE", "config")),
      credentials_path_(home_file(environment, "AWS_SHARED_CREDENTIALS_FILE", "credentials")),
      config_(read_ini_file(config_path_)),
      credentials_(read_ini_file(credentials_path_)) {}

std::optional<AwsProfile> AwsProfileFiles::profile(const std::string& name) const {
  const std::string config_name = name == "default" ? name : "profile " + name;
  const auto config = config_.find(config_name);
  const auto credentials = credentials_.find(name);
  AwsProfile found;
  found.name = name;
  found.config_section = "config file " + config_path_ + " [" + config_name + "]";
  found.credentials_section = "shared credentials file " + credentials_path_ + " [" + name + "]";
  if (config == config_.end() && credentials == credentials_.end()) return std::nullopt;
  if (config != config_.end()) found.config = config->second;
  if (credentials != credentials_.end()) found.credentials = credentials->second;
  return found;
}

}  // namespace rulestream
