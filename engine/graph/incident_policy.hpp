#pragma once

// How a rule's firings group into incidents: a rule configuration's setting (a rules file's
// "Incidents"), read by the ledger's IncidentBook (engine/graph/incident_book.hpp).

#include <cstdint>
#include <optional>

namespace rulestream {

// How a rule's firings are grouped (a rules file's "Incidents", RuleConfig::incidents).
struct IncidentPolicy {
  // true: firings group by series into incidents; false: every firing stands alone, with no
  // incident. When unset: grouped for the rules of the default set (rulestream's judgement,
  // rules/default_rules.hpp), alone for the others, which keep smdebug's per-step semantics.
  std::optional<bool> grouped;
  // A series whose next firing comes this many steps after its last one or more starts a new
  // incident; 0: never. When unset: kDefaultQuietSteps for a rule that does not say when its
  // condition clears, never for one that does (its firings after the first are updates of one
  // problem, however far apart: a loss 10x worse again).
  std::optional<std::int64_t> quiet_steps;
};

inline constexpr std::int64_t kDefaultQuietSteps = 100;

}  // namespace rulestream
