#pragma once

// What instances sharing a Redis must agree on: the rules they run (names, parameters, incident
// grouping, which sinks each notifies), the kinds and order of the service's sinks (an event
// in the stream names its sink by index), the name of a job's own rules file and the
// TensorBoard tag names. Two instances with different --rules once split the jobs' rules
// silently, each job judged by whichever instance took it. Not part of it: where each
// instance's sinks write (a file per instance is fine) and its stop actions' commands.

#include <string>

#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// A digest of what the instances must agree on (16 hex digits), and in words what it covers.
struct SharedConfiguration {
  std::string digest;
  std::string summary;  // "3 rules (VanishingGradient, ...), 1 sink (file)"
};

SharedConfiguration shared_configuration(const PipelineConfig& base,
                                         const std::string& job_rules_file);

}  // namespace rulestream
