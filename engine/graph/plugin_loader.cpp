#include "engine/graph/plugin_loader.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/graph/plugin_api.hpp"

namespace rulestream {
namespace {

// Collects what a plugin registers, so that a load that fails part way adds nothing.
class CollectingRegistrar final : public PluginRegistrar {
 public:
  void add_rule(RuleSpec spec) override { rules_.push_back(std::move(spec)); }
  void add_sink(SinkSpec spec) override { sinks_.push_back(std::move(spec)); }
  void fail(std::string_view message) override { failure_ = message; }

  std::vector<RuleSpec>& rules() { return rules_; }
  std::vector<SinkSpec>& sinks() { return sinks_; }
  const std::string& failure() const { return failure_; }

 private:
  std::vector<RuleSpec> rules_;
  std::vector<SinkSpec> sinks_;
  std::string failure_;
};

using EntryPoint = std::uint32_t (*)(std::uint32_t, PluginRegistrar*);

// dlerror()'s text: it names the file and the missing symbol or library.
std::string last_dl_error() {
  const char* error = ::dlerror();
  return error != nullptr ? error : "unknown dlopen error";
}

}  // namespace

void load_plugin(const std::string& path, RuleRegistry& rules, SinkRegistry& sinks) {
  static std::mutex mutex;
  // Per registry: a test (or a program) may load one plugin into registries of its own.
  static std::set<std::pair<const RuleRegistry*, std::filesystem::path>> loaded;
  const std::lock_guard lock(mutex);

  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::canonical(path, error);
  if (error) throw PluginError("plugin " + path + ": cannot load it: " + error.message());
  if (loaded.contains({&rules, canonical})) return;

  // dlopen looks a name without a slash up on the library path; a plugin is a file.
  // RTLD_NOW: a rulestream symbol this program lacks fails here, not at the first call.
  // RTLD_LOCAL: two plugins' own symbols never bind to each other.
  void* handle = ::dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw PluginError("plugin " + path + ": cannot load it: " + last_dl_error());
  // Never dlclose()d, even on failure past this point: nothing of it runs after a failed load,
  // and a plugin that loaded stays loaded (engine/graph/plugin_api.hpp).
  auto* entry = reinterpret_cast<EntryPoint>(::dlsym(handle, RULESTREAM_PLUGIN_ENTRY_POINT));
  if (entry == nullptr) {
    throw PluginError("plugin " + path + ": not a rulestream plugin: it has no " +
                      RULESTREAM_PLUGIN_ENTRY_POINT + " (define it with RULESTREAM_PLUGIN)");
  }
  CollectingRegistrar registrar;
  const std::uint32_t plugin_version = entry(kPluginAbiVersion, &registrar);
  if (plugin_version != kPluginAbiVersion) {
    throw PluginError("plugin " + path + ": built for plugin ABI version " +
                      std::to_string(plugin_version) + ", but this rulestream has ABI version " +
                      std::to_string(kPluginAbiVersion) + ": rebuild it against this rulestream");
  }
  if (!registrar.failure().empty()) {
    throw PluginError("plugin " + path + ": registration failed: " + registrar.failure());
  }
  // Added to copies first: a name that clashes fails the load with nothing added.
  RuleRegistry more_rules = rules;
  SinkRegistry more_sinks = sinks;
  try {
    for (RuleSpec& spec : registrar.rules()) more_rules.add(std::move(spec));
    for (SinkSpec& spec : registrar.sinks()) more_sinks.add(std::move(spec));
  } catch (const std::invalid_argument& rejected) {
    throw PluginError("plugin " + path + ": " + rejected.what());
  }
  rules = std::move(more_rules);
  sinks = std::move(more_sinks);
  loaded.insert({&rules, canonical});
}

}  // namespace rulestream
