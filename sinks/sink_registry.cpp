#include "sinks/sink_registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace rulestream {

SinkRegistry& SinkRegistry::plugins() {
  static SinkRegistry registry;
  return registry;
}

void SinkRegistry::add(SinkSpec spec) {
  if (spec.type.empty()) throw std::invalid_argument("a sink type needs a name");
  if (!spec.create) throw std::invalid_argument("sink type " + spec.type + " has no factory");
  // --sink TYPE:TARGET splits at the first ':'.
  if (spec.type.find(':') != std::string::npos) {
    throw std::invalid_argument("sink type \"" + spec.type + "\": a type has no ':' in it");
  }
  for (const char* builtin : {"stdout", "file", "webhook", "slack", "alertmanager"}) {
    if (spec.type == builtin) {
      throw std::invalid_argument("sink type \"" + spec.type + "\" is a built-in sink's");
    }
  }
  if (find(spec.type) != nullptr) {
    throw std::invalid_argument("sink type \"" + spec.type + "\" is already taken");
  }
  specs_.push_back(std::move(spec));
}

const SinkSpec* SinkRegistry::find(std::string_view type) const {
  const auto found = std::find_if(specs_.begin(), specs_.end(),
                                  [&](const SinkSpec& spec) { return spec.type == type; });
  return found == specs_.end() ? nullptr : &*found;
}

std::vector<std::string> SinkRegistry::types() const {
  std::vector<std::string> types;
  for (const auto& spec : specs_) types.push_back(spec.type);
  return types;
}

}  // namespace rulestream
