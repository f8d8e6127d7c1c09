// Built-in rules from Python: created by name with string parameters (as SageMaker's
// RuleParameters give them) through the same RuleRegistry the CLI uses, and invoked step by step
// (rulestream/rules.py wraps them as rulestream.Rule, so invoke_rule runs them like any rule).
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "python/src/bindings.hpp"
#include "python/src/trial_handle.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream::python {
namespace {

using py::arg;

std::unique_ptr<Rule> create_builtin_rule(const std::string& name, const TrialHandle& base_trial,
                                          const std::vector<const TrialHandle*>& other_trials,
                                          const RuleParameters& parameters) {
  RuleContext context{base_trial.trial(), {}};
  for (const TrialHandle* other : other_trials) context.other_trials.push_back(other->trial());
  const py::gil_scoped_release unlocked;
  return RuleRegistry::builtin().create(name, context, parameters);
}

py::dict finding_dict(const Finding& finding) {
  py::dict result;
  result["message"] = finding.message;
  result["tensors"] = finding.tensors;
  result["step"] = finding.step ? py::object(py::int_(*finding.step)) : py::none();
  py::dict figures;
  for (const Figure& figure : finding.figures) figures[py::str(figure.name)] = figure.value;
  result["figures"] = figures;
  return result;
}

py::list builtin_rule_specs() {
  py::list specs;
  for (const RuleSpec* spec : RuleRegistry::builtin().all()) {
    py::list parameters;
    for (const ParameterSpec& parameter : spec->parameters) {
      py::dict entry;
      entry["name"] = parameter.name;
      entry["type"] = parameter.type;
      entry["default"] = parameter.default_value;
      entry["description"] = parameter.description;
      parameters.append(entry);
    }
    py::dict entry;
    entry["name"] = spec->name;
    entry["aliases"] = spec->aliases;
    entry["description"] = spec->description;
    entry["parameters"] = parameters;
    specs.append(entry);
  }
  return specs;
}

}  // namespace

void bind_rules(py::module_& module) {
  py::class_<Rule>(module, "_BuiltinRule", "A built-in rule, made by rulestream.create_rule.")
      .def_property_readonly("name", [](const Rule& self) { return std::string(self.name()); })
      .def("invoke", &Rule::invoke, arg("step"), py::call_guard<py::gil_scoped_release>(),
           "Waits for the step, evaluates it on an unchanging view of the trials and raises "
           "RuleEvaluationConditionMet when the condition is met (smdebug's Rule.invoke).")
      .def("invoke_at_step", &Rule::invoke_at_step, arg("step"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("last_finding",
                             [](const Rule& self) { return finding_dict(self.last_finding()); });

  module.def("_create_builtin_rule", &create_builtin_rule, arg("name"), arg("base_trial"),
             arg("other_trials"), arg("parameters"));
  module.def("_builtin_rule_specs", &builtin_rule_specs);
}

}  // namespace rulestream::python
