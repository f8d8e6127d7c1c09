#include "apps/cli/storage_cli_options.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rulestream::cli {

namespace po = boost::program_options;

void add_storage_options(po::options_description& options) {
  options.add_options()(
      "s3-endpoint", po::value<std::string>()->value_name("URL"),
      "an S3-compatible store for s3:// paths (default: AWS_ENDPOINT_URL, else AWS)")(
      "s3-addressing", po::value<std::string>()->value_name("STYLE")->default_value("auto"),
      "how requests name the bucket: virtual (in the host name), path (in the path), or auto "
      "(virtual on AWS, path on an --s3-endpoint)")(
      "s3-timeout", po::value<double>()->value_name("SECONDS")->default_value(60),
      "longest an S3 request may take, body included")(
      "s3-retries", po::value<int>()->value_name("N")->default_value(5),
      "retries of an S3 request that failed in a way that may pass (5xx, timeouts, ...)");
}

StorageOptions storage_options_from(const po::variables_map& options) {
  StorageOptions storage;
  if (options.count("s3-endpoint")) storage.s3_endpoint = options["s3-endpoint"].as<std::string>();
  const std::string addressing = options["s3-addressing"].as<std::string>();
  if (addressing == "path") {
    storage.s3_addressing = S3Addressing::Path;
  } else if (addressing == "virtual") {
    storage.s3_addressing = S3Addressing::Virtual;
  } else if (addressing != "auto") {
    throw std::invalid_argument("--s3-addressing must be auto, path or virtual, not \"" +
                                addressing + "\"");
  }
  const double timeout = options["s3-timeout"].as<double>();
  if (!(timeout > 0) || !std::isfinite(timeout)) {
    throw std::invalid_argument("--s3-timeout must be a positive number of seconds, not " +
                                std::to_string(timeout));
  }
  storage.s3_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000.0));
  const int retries = options["s3-retries"].as<int>();
  if (retries < 0) {
    throw std::invalid_argument("--s3-retries must be 0 or more, not " + std::to_string(retries));
  }
  storage.s3_attempts = retries + 1;
  return storage;
}

}  // namespace rulestream::cli
