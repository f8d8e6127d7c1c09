#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// What a notify action may call a sink, and how errors show it.
struct SinkLabel {
  std::vector<std::string> names;
  std::string shown;  // never a webhook URL (they carry secrets)
};
// A configured sink answers to its "name" and to its target (the file's path, the webhook's
// URL; "stdout" for stdout).
SinkLabel label_of(const SinkConfig& config);
// A sink built by hand (no SinkConfig): its describe() text.
SinkLabel label_of(const std::string& description);

// Which sinks get which rules' events (conditions met and the final status alike). A sink no
// notify action names gets every rule's events, as without notify; a sink that some notify
// actions name is reserved for the rules naming it (a Slack channel only for the stall alarm).
// So a rule with a notify action reaches the sinks it names in addition to the general ones.
class SinkRouting {
 public:
  // `rules` are the configured rules (their configuration names set), `sinks` the labels of the
  // pipeline's sinks in order. Throws RuleConfigError naming the rule and the sink for a
  // notify action naming no sink.
  SinkRouting(const std::vector<RuleConfig>& rules, const std::vector<SinkLabel>& sinks);

  // The sinks (indexes) rule `rule` (index into `rules`) sends its events to.
  const std::vector<std::size_t>& sinks_of(std::size_t rule) const { return routes_.at(rule); }

 private:
  std::vector<std::vector<std::size_t>> routes_;
};

}  // namespace rulestream
