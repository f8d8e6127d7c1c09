// The exit statuses docs/cli.md promises, outcome by outcome.
#include "apps/cli/exit_status.hpp"

#include <gtest/gtest.h>

#include "apps/cli/cli.hpp"

namespace rulestream::cli {
namespace {

JobOutcome outcome(std::int64_t fired, bool rule_errors, bool interrupted = false,
                   std::string source_failure = "") {
  JobOutcome made;
  made.conditions_met = fired;
  made.rule_errors = rule_errors;
  made.interrupted = interrupted;
  made.source_failure = std::move(source_failure);
  return made;
}

TEST(ExitStatus, ReadToTheEnd) {
  EXPECT_EQ(exit_status_of(outcome(0, false)), kExitOk);
  EXPECT_EQ(exit_status_of(outcome(3, false)), kExitRuleFired);
  EXPECT_EQ(exit_status_of(outcome(0, true)), kExitError);
  EXPECT_EQ(exit_status_of(outcome(3, true)), kExitError);  // one fired, another failed
}

// Ctrl-C during a replay: every rule that did not fire is in Error for the interruption, so
// rule_errors holds whenever one rule fired and another did not. What fired decides: 1, as
// docs/cli.md says, not 2.
TEST(ExitStatus, AnInterruptedReplayIsOneWhenARuleFiredAndTwoOtherwise) {
  EXPECT_EQ(exit_status_of(outcome(1, true, true)), kExitRuleFired);
  EXPECT_EQ(exit_status_of(outcome(1, false, true)), kExitRuleFired);
  EXPECT_EQ(exit_status_of(outcome(0, true, true)), kExitError);
  EXPECT_EQ(exit_status_of(outcome(0, false, true)), kExitError);
}

TEST(ExitStatus, ASourceThatFailedIsAnErrorWhateverFired) {
  EXPECT_EQ(exit_status_of(outcome(5, false, false, "listing refused")), kExitError);
  EXPECT_EQ(exit_status_of(outcome(5, true, true, "listing refused")), kExitError);
}

}  // namespace
}  // namespace rulestream::cli
