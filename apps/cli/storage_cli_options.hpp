#pragma once

#include <boost/program_options.hpp>

#include "core/model/storage_options.hpp"

namespace rulestream::cli {

// --s3-endpoint, --s3-timeout and --s3-retries, which watch, replay and inspect share.
void add_storage_options(boost::program_options::options_description& options);

// Throws std::invalid_argument naming the option when a value is out of range.
StorageOptions storage_options_from(const boost::program_options::variables_map& options);

}  // namespace rulestream::cli
