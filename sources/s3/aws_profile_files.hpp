#pragma once

#include <map>
#include <optional>
#include <string>

#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

// One profile's settings as the AWS CLI and SDKs read them: the config file's section ([profile
// NAME], or [default]) and the shared credentials file's [NAME], the latter winning where both
// set a key.
struct AwsProfile {
  using Section = std::map<std::string, std::string>;

  std::string name;
  Section config;                   // from the config file
  Section credentials;              // from the shared credentials file
  std::string config_section;       // "config file /root/.aws/config [profile dev]"
  std::string credentials_section;  // "shared credentials file /root/.aws/credentials [dev]"

  // The value of `key` ("" when unset), and which file and section it came from.
  std::string get(const std::string& key) const;
  std::string where(const std::string& key) const;
};

// The two files (AWS_CONFIG_FILE, else ~/.aws/config; AWS_SHARED_CREDENTIALS_FILE, else
// ~/.aws/credentials), read once. A file that is missing or unreadable has no profiles.
class AwsProfileFiles {
 public:
  explicit AwsProfileFiles(const EnvironmentLookup& environment);

  // nullopt when neither file has a section for `name`.
  std::optional<AwsProfile> profile(const std::string& name) const;

  const std::string& config_path() const { return config_path_; }
  const std::string& credentials_path() const { return credentials_path_; }

 private:
  using IniFile = std::map<std::string, AwsProfile::Section>;

  std::string config_path_;
  std::string credentials_path_;
  IniFile config_;
  IniFile credentials_;
};

}  // namespace rulestream
