#pragma once

#include <memory>
#include <ostream>

#include "pipeline/graph/pipeline_config.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// Builds a configured sink; stdout sinks write to `out`. Throws StorageError (file sinks that
// cannot be opened) or std::invalid_argument (an unknown type).
std::unique_ptr<Sink> make_sink(const SinkConfig& config, std::ostream& out);

}  // namespace rulestream
