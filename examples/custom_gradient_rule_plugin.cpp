// A plugin: the CustomGradientRule of custom_gradient_rule.hpp, and a sink type of its own,
// "step_list", so that the rulestream command runs them as it runs its built-in ones:
//
//   rulestream replay JOB --rule CustomGradientRule:threshold=20 --sink step_list:fired.txt
//       --plugin build-examples/example_custom_gradient_rule_plugin.so
//
// or, in a rules file: "plugins": ["example_custom_gradient_rule_plugin.so"] and
// "sinks": [{"type": "step_list", "path": "fired.txt"}].
//
// A plugin links no rulestream library: Rule, Trial, Sink and the registries are the
// command's own (engine/graph/plugin_api.hpp states the contract). Build it with
// examples/CMakeLists.txt against the installed package.

#include <fstream>
#include <memory>
#include <mutex>
#include <rulestream/rulestream.hpp>  // the umbrella header: RULESTREAM_PLUGIN among the rest
#include <stdexcept>
#include <string>

#include "examples/custom_gradient_rule.hpp"

namespace example {

// Writes "CONFIGURATION STEP" for each condition met, one line each, to a file: a list a
// script can read. The pipeline calls write() from several threads at once, so it locks.
class StepListSink final : public rulestream::Sink {
 public:
  explicit StepListSink(const std::string& path) : path_(path), out_(path, std::ios::trunc) {
    if (!out_) throw std::invalid_argument("cannot write " + path);
  }

  // --sink step_list:PATH gives {"target": PATH}; a rules file's sink {"path": PATH}.
  static rulestream::SinkSpec spec() {
    rulestream::SinkSpec spec;
    spec.type = "step_list";
    spec.description = "the step of each condition met, a line each, in a file";
    spec.create = [](const rulestream::SinkParameters& parameters) {
      std::string path;
      for (const auto& [key, value] : parameters) {
        if (key != "path" && key != "target") {
          throw std::invalid_argument("unknown parameter '" + key + "' (known: path)");
        }
        path = value;
      }
      if (path.empty()) throw std::invalid_argument("needs a path (step_list:PATH)");
      return std::unique_ptr<rulestream::Sink>(new StepListSink(path));
    };
    return spec;
  }

  std::string describe() const override { return "step_list " + path_; }

  void write(const rulestream::RuleEvent& event) override {
    if (event.kind != rulestream::RuleEvent::Kind::ConditionMet) return;
    const std::lock_guard lock(mutex_);
    out_ << event.rule_configuration << " " << event.global_step << "\n";
  }

  void flush() override {
    const std::lock_guard lock(mutex_);
    out_.flush();
  }

 private:
  std::string path_;
  std::mutex mutex_;
  std::ofstream out_;
};

void register_plugin(rulestream::PluginRegistrar& registrar) {
  registrar.add_rule(CustomGradientRule::spec());
  registrar.add_sink(StepListSink::spec());
}

}  // namespace example

RULESTREAM_PLUGIN(example::register_plugin)
