// IncidentBook: a rule's firings grouped by series into incidents, opened, updated, resolved.
#include "engine/graph/incident_book.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace rulestream {
namespace {

RuleEvent firing(const std::string& series, std::int64_t step, double value) {
  RuleEvent event;
  event.kind = RuleEvent::Kind::ConditionMet;
  event.global_step = step;
  event.tensors = {series};
  event.figures = {{"value", value, series}};
  event.message = series + " at " + std::to_string(step);
  return event;
}

IncidentPolicy grouped(std::optional<std::int64_t> quiet_steps = std::nullopt) {
  return {.grouped = true, .quiet_steps = quiet_steps};
}

TEST(IncidentBook, FiringsOfOneSeriesAreOneIncidentAndEachSeriesHasItsOwn) {
  IncidentBook book("D", "Divergence", grouped(), /*clears_itself=*/true);
  RuleEvent first = firing("loss", 3, 9.0);
  EXPECT_FALSE(book.fire(first));
  ASSERT_TRUE(first.incident);
  EXPECT_EQ(first.incident->id, "D/loss#1");
  EXPECT_EQ(first.incident->state, IncidentNote::State::Opened);
  EXPECT_EQ(first.incident->firings, 1);

  RuleEvent other = firing("val_loss", 4, 2.0);
  book.fire(other);
  EXPECT_EQ(other.incident->id, "D/val_loss#1");
  EXPECT_EQ(other.incident->state, IncidentNote::State::Opened);

  // Far later, and worse by 1e4: an update (a rule that clears itself has no quiet span).
  RuleEvent later = firing("loss", 500, 9e4);
  EXPECT_FALSE(book.fire(later));
  EXPECT_EQ(later.incident->id, "D/loss#1");
  EXPECT_EQ(later.incident->state, IncidentNote::State::Updated);
  EXPECT_EQ(later.incident->firings, 2);
  EXPECT_EQ(later.incident->opened_step, 3);
  EXPECT_EQ(later.incident->worst->value, 9e4);
  EXPECT_EQ(later.incident->worst_step, 500);
  EXPECT_EQ(book.opened(), 2);
}

TEST(IncidentBook, TheWorstFiringIsTheFarthestFromTheFirstInEitherDirection) {
  // A gradient norm vanishing: 1e-4 first, then 1e-6 (100x farther), then 1e-5.
  IncidentBook book("V", "GradientVanishing", grouped(), true);
  RuleEvent a = firing("norm", 10, 1e-4), b = firing("norm", 20, 1e-6),
            c = firing("norm", 30, 1e-5);
  book.fire(a);
  book.fire(b);
  book.fire(c);
  EXPECT_EQ(c.incident->worst->value, 1e-6);
  EXPECT_EQ(c.incident->worst_step, 20);
}

TEST(IncidentBook, AClearingResolvesTheSeriesIncidentAndTheNextFiringOpensTheSecond) {
  IncidentBook book("D", "Divergence", grouped(), true);
  RuleEvent first = firing("loss", 3, 9.0);
  book.fire(first);
  EXPECT_FALSE(book.clear("val_loss", 40, "cleared"));  // nothing open there
  const auto resolved = book.clear("loss", 40, "cleared at step 40");
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->kind, RuleEvent::Kind::IncidentResolved);
  EXPECT_EQ(resolved->global_step, 40);
  EXPECT_EQ(resolved->tensors, std::vector<std::string>{"loss"});
  EXPECT_EQ(resolved->incident->id, "D/loss#1");
  EXPECT_EQ(resolved->incident->state, IncidentNote::State::Resolved);
  EXPECT_EQ(resolved->message, "cleared at step 40; it opened with: loss at 3");
  RuleEvent again = firing("loss", 90, 20.0);
  book.fire(again);
  EXPECT_EQ(again.incident->id, "D/loss#2");
  EXPECT_EQ(again.incident->state, IncidentNote::State::Opened);
}

TEST(IncidentBook, ARuleThatFiresPerStepStartsANewIncidentAfterAQuietSpan) {
  // 100 steps by default for a rule that does not clear itself: steps 10-12 are one incident;
  // step 112 is 100 after 12: the first resolves at 112 and the firing opens the second.
  IncidentBook book("LND", "LossNotDecreasing", grouped(), /*clears_itself=*/false);
  for (const std::int64_t step : {10, 11, 12}) {
    RuleEvent event = firing("loss", step, 1.0);
    EXPECT_FALSE(book.fire(event));
  }
  RuleEvent later = firing("loss", 112, 1.0);
  const auto resolved = book.fire(later);
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->global_step, 112);
  EXPECT_EQ(resolved->incident->firings, 3);
  EXPECT_EQ(resolved->incident->last_step, 12);
  EXPECT_EQ(resolved->message.rfind("no firing for 100 steps", 0), 0U) << resolved->message;
  EXPECT_EQ(later.incident->id, "LND/loss#2");
  // A rules file's QuietSteps: 0 never splits.
  IncidentBook never("LND", "LossNotDecreasing", grouped(0), false);
  RuleEvent a = firing("loss", 1, 1.0), b = firing("loss", 100000, 1.0);
  never.fire(a);
  EXPECT_FALSE(never.fire(b));
  EXPECT_EQ(b.incident->state, IncidentNote::State::Updated);
}

TEST(IncidentBook, TheJobsEndResolvesWhatIsOpenInTheOrderItOpened) {
  IncidentBook book("D", "Divergence", grouped(), true);
  RuleEvent b = firing("b", 5, 1.0), a = firing("a", 7, 1.0);
  book.fire(b);
  book.fire(a);
  const std::vector<RuleEvent> resolved = book.close_all("open when the job ended");
  ASSERT_EQ(resolved.size(), 2U);
  EXPECT_EQ(resolved[0].incident->id, "D/b#1");
  EXPECT_EQ(resolved[1].incident->id, "D/a#1");
  EXPECT_EQ(resolved[1].global_step, 7);
  EXPECT_TRUE(book.close_all("again").empty());
}

TEST(IncidentBook, GroupingIsTheDefaultSetsAndARulesFileMayTurnItEitherWay) {
  RuleEvent event = firing("loss", 1, 1.0);
  IncidentBook sagemaker("LND", "LossNotDecreasing", {}, false);
  EXPECT_FALSE(sagemaker.grouped());
  EXPECT_FALSE(sagemaker.fire(event));
  EXPECT_FALSE(event.incident);  // as smdebug's rules fire: one event a step, no incident
  EXPECT_TRUE(IncidentBook("D", "Divergence", {}, true).grouped());
  EXPECT_TRUE(IncidentBook("LND", "LossNotDecreasing", grouped(), false).grouped());
  EXPECT_FALSE(IncidentBook("D", "Divergence", {.grouped = false}, true).grouped());
}

}  // namespace
}  // namespace rulestream
