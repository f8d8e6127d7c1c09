#pragma once

#include <memory>
#include <ostream>

#include "pipeline/graph/pipeline_config.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// Builds a configured sink; stdout sinks write to `out`; a plugin's type is built by its
// factory in SinkRegistry::plugins(). Throws StorageError (file sinks that cannot be opened),
// std::invalid_argument (an unknown type), or what a plugin's factory throws.
std::unique_ptr<Sink> make_sink(const SinkConfig& config, std::ostream& out);

}  // namespace rulestream
