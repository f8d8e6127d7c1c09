#pragma once

// rulestream's public API in one include, for a program or plugin built against the installed
// package (find_package(rulestream); docs/cpp.md, "In your own C++ project"):
//   Trial and Tensor      smdebug's Trial API over a local folder or s3:// prefix
//   Rule, invoke_rule     write a rule of your own (smdebug's Rule)
//   RuleRegistry          the built-in rules by name, and yours beside them
//   RulePipeline          run rules over a job as rulestream replay/watch do
//   Sink, SinkRegistry    where a pipeline's rule events go, and the sink types of plugins
//   JobSimulator          write a synthetic job to try rules on
//   load_plugin           load a plugin's rules and sinks (plugin_api.hpp to write one)
// Each header names its own dependencies; including them one by one is as good.

#include "apps/simulator/job_simulator.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/rule_event.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/plugin_api.hpp"
#include "engine/graph/plugin_loader.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "sinks/sink.hpp"
#include "sinks/sink_registry.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"
