#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "engine/graph/pipeline_config.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// Builds a configured sink; stdout sinks write to `out`; a plugin's type is built by its
// factory in SinkRegistry::plugins(). Throws StorageError (file sinks that cannot be opened),
// std::invalid_argument (an unknown type), or what a plugin's factory throws. `may_resend`: for
// a sink that sends on its own, later (an Alertmanager sink's resends), asked before each such
// send (AlertmanagerSink::Options::may_resend); the other sinks do not use it.
std::unique_ptr<Sink> make_sink(const SinkConfig& config, std::ostream& out,
                                std::function<bool()> may_resend = {});

// What make_sink(config)->describe() says, without making the sink (a URL redacted); a
// plugin's sink type is named by its type.
std::string describe_sink(const SinkConfig& config);

}  // namespace rulestream
