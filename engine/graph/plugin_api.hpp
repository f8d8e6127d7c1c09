#pragma once

// The plugin ABI: how a shared library adds rules and sinks to a rulestream program
// (`rulestream replay --plugin FILE.so`, `"plugins": [...]` in a rules file, or load_plugin()
// in a program of your own). A plugin is one source file or more, built against the installed
// package (examples/custom_gradient_rule_plugin.cpp is one):
//
//   #include <rulestream/rulestream.hpp>  // or "engine/graph/plugin_api.hpp"
//   void register_plugin(rulestream::PluginRegistrar& registrar) {
//     registrar.add_rule(MyRule::spec());      // --rule MyRule:key=value
//     registrar.add_sink(MySink::spec());      // --sink mytype:TARGET, {"type": "mytype", ...}
//   }
//   RULESTREAM_PLUGIN(register_plugin)
//
//   add_library(my_rules MODULE my_rules.cpp)
//   target_link_libraries(my_rules PRIVATE rulestream::plugin)
//
// The contract between the plugin and the program that loads it (the host):
// - One copy of rulestream. The plugin links none of rulestream's libraries (the
//   rulestream::plugin target gives the headers and nothing to link): every rulestream symbol
//   it uses (Rule's constructor, Trial, ParameterReader, the typeinfo of Rule and of the
//   exceptions) is resolved at load time against the host, which exports them (the rulestream
//   command is linked with every floor whole and -rdynamic; a program of your own that loads
//   plugins sets ENABLE_EXPORTS). So the plugin's rules derive from the host's Rule, its
//   exceptions are the host's types and are caught as such, and the registries it adds to are
//   the host's. A symbol the host lacks fails the load (RTLD_NOW), naming it.
// - The same C++ ABI: the plugin is compiled by a compiler with the host's C++ ABI (GCC's or
//   Clang's on Linux, the same libstdc++) and against the headers of a rulestream with the
//   same kPluginAbiVersion. The version is checked before any C++ type crosses the boundary:
//   the entry point is extern "C", and the plugin touches the registrar only once the
//   versions agree.
// - Registration happens once, from the thread that loads the plugin, before any pipeline runs;
//   the registrar is valid only during the call. A plugin stays loaded until the process exits
//   (its code is behind every rule and sink it made), so it is never unloaded.
// - Errors: a registration function may throw; the entry point RULESTREAM_PLUGIN defines
//   catches what it throws and hands the message to the host, which reports it naming the file.

#include <cstdint>
#include <exception>
#include <string_view>

#include "rules/rule_registry.hpp"
#include "sinks/sink_registry.hpp"

namespace rulestream {

// Bumped whenever a type a plugin sees changes its layout, its virtual functions or a
// signature: the public headers (RULESTREAM_PUBLIC_HEADERS) and this one.
// 2: Rule::evaluates_steps_independently, Sink::delivery().
// 3: Storage::open_stored_file (StoredFile); Rule::for_ranges_in_parallel and its CPU count
//    (Rule's layout).
// 4: Rule::reads_ahead and read_step (virtual), read_ahead, invoke_with, reading, StepReading,
//    ReadAhead; Rule::parallel_section_cpu counted per thread (Rule's layout).
inline constexpr std::uint32_t kPluginAbiVersion = 4;

// What a plugin's registration function is given. Implemented by the host.
class PluginRegistrar {
 public:
  // Adds a rule under spec.name and its aliases. A name the host already knows (a built-in
  // rule, or one of another plugin) fails the load of this plugin.
  virtual void add_rule(RuleSpec spec) = 0;
  // Adds a sink type (sinks/sink_registry.hpp). A built-in type's name, or a type the host
  // already knows, fails the load of this plugin.
  virtual void add_sink(SinkSpec spec) = 0;
  // Why registration failed (what the registration function threw); the load then fails.
  virtual void fail(std::string_view message) = 0;

 protected:
  ~PluginRegistrar() = default;  // the host owns it; a plugin never deletes it
};

}  // namespace rulestream

// The one entry point the host looks up, by this name. It returns the plugin's ABI version
// and calls back into `registrar` only when that equals `host_abi_version`; otherwise the host
// reports both versions and never touches the plugin again. Define it with RULESTREAM_PLUGIN.
#define RULESTREAM_PLUGIN_ENTRY_POINT "rulestream_plugin_register"
extern "C" std::uint32_t rulestream_plugin_register(std::uint32_t host_abi_version,
                                                    rulestream::PluginRegistrar* registrar);

// Defines the entry point over `register_function`, a void(rulestream::PluginRegistrar&).
#define RULESTREAM_PLUGIN(register_function)                                                  \
  extern "C" __attribute__((visibility("default"))) std::uint32_t rulestream_plugin_register( \
      std::uint32_t host_abi_version, rulestream::PluginRegistrar* registrar) {               \
    if (host_abi_version != rulestream::kPluginAbiVersion) {                                  \
      return rulestream::kPluginAbiVersion;                                                   \
    }                                                                                         \
    try {                                                                                     \
      register_function(*registrar);                                                          \
    } catch (const std::exception& error) {                                                   \
      registrar->fail(error.what());                                                          \
    } catch (...) {                                                                           \
      registrar->fail("the registration function threw something not a std::exception");      \
    }                                                                                         \
    return rulestream::kPluginAbiVersion;                                                     \
  }
