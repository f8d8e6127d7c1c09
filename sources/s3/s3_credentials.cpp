#include "sources/s3/s3_credentials.hpp"

#include <cstdlib>
#include <fstream>
#include <map>

#include "pipeline/model/exceptions.hpp"

namespace rulestream {
namespace {

using Section = std::map<std::string, std::string>;
using IniFile = std::map<std::string, Section>;

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The AWS files are INI-like: [section], key = value, '#' or ';' comments. An indented line
// continues the previous key (nested settings such as "s3 =" blocks), which we do not need.
IniFile read_ini_file(const std::string& path) {
  IniFile file;
  std::ifstream in(path);
  if (!in) return file;
  std::string line;
  Section* current = nullptr;
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

std::optional<std::string> non_empty(const EnvironmentLookup& environment, std::string_view name) {
  auto value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string home_file(const EnvironmentLookup& environment, std::string_view override_variable,
                      std::string_view default_name) {
  if (auto path = non_empty(environment, override_variable)) return *path;
  const std::string home = non_empty(environment, "HOME").value_or("");
  return home + "/.aws/" + std::string(default_name);
}

const Section* find_section(const IniFile& file, const std::string& name) {
  const auto it = file.find(name);
  return it == file.end() ? nullptr : &it->second;
}

std::string value_of(const Section* section, const std::string& key) {
  if (section == nullptr) return {};
  const auto it = section->find(key);
  return it == section->end() ? std::string() : it->second;
}

// Keys from one section of a credentials or config file, or nullopt when it has none.
std::optional<S3Credentials> keys_from(const Section* section, std::string source) {
  S3Credentials credentials;
  credentials.access_key_id = value_of(section, "aws_access_key_id");
  credentials.secret_access_key = value_of(section, "aws_secret_access_key");
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return std::nullopt;
  }
  credentials.session_token = value_of(section, "aws_session_token");
  credentials.source = std::move(source);
  return credentials;
}

}  // namespace

EnvironmentLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::string S3Credentials::describe() const {
  const std::string tail = access_key_id.size() > 4 ? access_key_id.substr(access_key_id.size() - 4)
                                                    : std::string(access_key_id.size(), '*');
  return "access key ..." + tail + (session_token.empty() ? "" : " with a session token") +
         " from " + source + ", region " + region;
}

S3Credentials load_s3_credentials(const EnvironmentLookup& environment) {
  const std::string profile = non_empty(environment, "AWS_PROFILE").value_or("default");
  const std::string config_path = home_file(environment, "AWS_CONFIG_FILE", "config");
  const IniFile config = read_ini_file(config_path);
  const std::string config_section_name = profile == "default" ? profile : "profile " + profile;
  const Section* config_section = find_section(config, config_section_name);

  const auto id = non_empty(environment, "AWS_ACCESS_KEY_ID");
  const auto secret = non_empty(environment, "AWS_SECRET_ACCESS_KEY");
  if (id.has_value() != secret.has_value()) {
    throw StorageError(
        std::string(id ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
                       : "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not") +
        ": set both, or neither to use the shared credentials file");
  }
  std::optional<S3Credentials> found;
  if (id) {
    found = S3Credentials{.access_key_id = *id,
                          .secret_access_key = *secret,
                          .session_token = non_empty(environment, "AWS_SESSION_TOKEN").value_or(""),
                          .source = "environment"};
  }
  const std::string credentials_path =
      home_file(environment, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
  if (!found) {
    const IniFile shared = read_ini_file(credentials_path);
    found = keys_from(find_section(shared, profile),
                      "shared credentials file " + credentials_path + " [" + profile + "]");
  }
  if (!found) {
    found =
        keys_from(config_section, "config file " + config_path + " [" + config_section_name + "]");
  }
  if (!found) {
    throw StorageError(
        "no AWS credentials for S3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add "
        "profile [" +
        profile + "] to " + credentials_path + " (AWS_PROFILE picks another profile)");
  }
  found->region = non_empty(environment, "AWS_REGION")
                      .value_or(non_empty(environment, "AWS_DEFAULT_REGION")
                                    .value_or(value_of(config_section, "region")));
  if (found->region.empty()) found->region = "us-east-1";
  return *found;
}

}  // namespace rulestream
