#include "apps/serve/shared_configuration.hpp"

#include <cstdint>
#include <cstdio>

namespace rulestream {
namespace {

// FNV-1a, 64 bits: a digest to compare, not a secret to keep.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

// Each field on a line of its own, with its length first: no two configurations write the same
// text.
void field(std::string& out, const std::string& value) {
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

}  // namespace

SharedConfiguration shared_configuration(const PipelineConfig& base,
                                         const std::string& job_rules_file) {
  std::string canonical;
  std::string rule_names;
  for (const RuleConfig& rule : base.rules) {
    field(canonical, "rule");
    field(canonical, rule.configuration_name.empty() ? rule.rule : rule.configuration_name);
    field(canonical, rule.rule);
    for (const auto& [name, value] : rule.parameters) {  // a std::map: in order
      field(canonical, name);
      field(canonical, value);
    }
    for (const std::string& sink : rule.notify_sinks) field(canonical, "notify " + sink);
    field(canonical, rule.only_where_applicable ? "default-set" : "named");
    field(canonical, rule.incidents.grouped ? (*rule.incidents.grouped ? "grouped" : "single")
                                            : "grouping unset");
    field(canonical,
          rule.incidents.quiet_steps ? std::to_string(*rule.incidents.quiet_steps) : "quiet unset");
    rule_names += (rule_names.empty() ? "" : ", ") +
                  (rule.configuration_name.empty() ? rule.rule : rule.configuration_name);
  }
  std::string sink_kinds;
  for (const SinkConfig& sink : base.sinks) {
    const std::string kind = sink.type + (sink.slack ? " (slack)" : "");
    field(canonical, "sink " + kind);
    sink_kinds += (sink_kinds.empty() ? "" : ", ") + kind;
  }
  field(canonical, "job rules " + job_rules_file);
  for (const auto& [role, patterns] : base.tensorboard_names) {
    field(canonical, "tensorboard " + role);
    for (const std::string& pattern : patterns) field(canonical, pattern);
  }
  char digest[17];
  std::snprintf(digest, sizeof(digest), "%016llx",
                static_cast<unsigned long long>(fnv1a(canonical)));
  const std::size_t rules = base.rules.size();
  const std::size_t sinks = base.sinks.size();
  return {digest, std::to_string(rules) + (rules == 1 ? " rule (" : " rules (") + rule_names +
                      "), " + std::to_string(sinks) + (sinks == 1 ? " sink" : " sinks") +
                      (sinks == 0 ? "" : " (" + sink_kinds + ")") + ", job rules file '" +
                      job_rules_file + "'"};
}

}  // namespace rulestream
