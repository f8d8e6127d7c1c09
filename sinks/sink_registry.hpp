#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sinks/sink.hpp"

namespace rulestream {

// A sink's settings as strings: a rules file's sink object without "type" and "name"
// ({"type": "csv", "path": "events.csv"} gives {"path": "events.csv"}), or "target" from the
// command line (--sink csv:events.csv gives {"target": "events.csv"}).
using SinkParameters = std::map<std::string, std::string>;

// A sink type a plugin adds (engine/graph/plugin_api.hpp) beside the built-in ones (stdout,
// file, webhook, slack, alertmanager), which are not in any registry.
struct SinkSpec {
  std::string type;  // what "type" and --sink TYPE:... name: "csv"
  std::string description;
  // Builds the sink; throws (std::invalid_argument, RulestreamError) with a clear message for
  // bad or missing parameters or a sink that cannot work at all.
  std::function<std::unique_ptr<Sink>(const SinkParameters&)> create;
};

// Type -> factory for the sink types of plugins.
// Concurrency: not locked. Sink types are added before anything reads the registry (plugins
// load before any pipeline is configured); from then on it is only read, from any thread.
class SinkRegistry {
 public:
  // The process's registry: what load_plugin adds to, and what the CLI reads.
  static SinkRegistry& plugins();

  // Throws std::invalid_argument for a type without a name or a factory, a built-in type's
  // name, or a type already added.
  void add(SinkSpec spec);
  const SinkSpec* find(std::string_view type) const;  // exact, case-sensitive; nullptr if none
  std::vector<std::string> types() const;             // in the order added

 private:
  std::vector<SinkSpec> specs_;
};

}  // namespace rulestream
