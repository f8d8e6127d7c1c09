// Rules that judge each step on its own (Rule::evaluates_steps_independently) are evaluated on
// several instances at once and their outcomes put back in step order (RuleStage): the events,
// statuses and errors must be those of the serial form, whatever order evaluations finish in.
#include "engine/graph/rule_stage.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>

#include "core/model/busy_timer.hpp"
#include "tests/support/one_rule_replay.hpp"
#include "tests/support/overtaking_gate.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using rulestream::testing::OneRuleReplay;
using rulestream::testing::OvertakingGate;
using rulestream::testing::replay_one_rule;
using rulestream::testing::TempDir;
using rulestream::testing::write_simulated_job;
using namespace std::chrono_literals;

constexpr std::int64_t kSteps = 12;
constexpr std::chrono::milliseconds kWorkPerStep{1};

// What the test rule's instances share: how many were made, which evaluated which step, and a
// gate that holds step 0's evaluation until step 1's has finished (so outcomes complete out of
// step order whenever two threads evaluate).
struct Shared {
  explicit Shared(std::chrono::milliseconds wait_for_step_one = {}) : gate(wait_for_step_one) {}
  std::atomic<int> instances{0};
  std::mutex mutex;
  std::set<int> instances_used;         // guarded by mutex
  std::optional<std::int64_t> fail_at;  // the rule throws at this step
  OvertakingGate gate;
};

// Fires at odd steps with a message naming only the step; throws at Shared::fail_at.
class OddStepRule final : public Rule {
 public:
  OddStepRule(Trial trial, Shared& shared) : Rule(std::move(trial)), shared_(shared) {
    id_ = shared_.instances++;
  }
  std::string_view name() const override { return "OddStep"; }
  bool evaluates_steps_independently() const override { return true; }
  bool invoke_at_step(std::int64_t step) override {
    // Some work of its own at every step (a millisecond of this thread's CPU), so that what the
    // evaluating costs can be told from what putting the outcomes in order costs.
    const auto start = BusyTimer::now();
    while (BusyTimer::now() - start < kWorkPerStep) {
    }
    {
      const std::lock_guard lock(shared_.mutex);
      shared_.instances_used.insert(id_);
    }
    shared_.gate.finished(step);  // step 0 waits for step 1, evaluated on another instance
    if (shared_.fail_at && step == *shared_.fail_at) throw std::runtime_error("broken on purpose");
    if (step % 2 == 0) return false;
    report({.tensors = {}, .figures = {}, .message = "odd step " + std::to_string(step)});
    return true;
  }

 private:
  Shared& shared_;
  int id_ = 0;
};

OneRuleReplay replay(const std::filesystem::path& trial, int threads, Shared& shared) {
  return replay_one_rule(
      trial, threads, "OddStep", [&shared](const RuleContext& context, const RuleParameters&) {
        return std::unique_ptr<Rule>(new OddStepRule(context.base_trial, shared));
      });
}

// The condition-met events' steps in arrival order, and the status.
std::vector<std::int64_t> fired_steps(const OneRuleReplay& run) {
  std::vector<std::int64_t> steps;
  for (const RuleEvent& event : run.events) {
    if (event.kind == RuleEvent::Kind::ConditionMet) steps.push_back(event.global_step);
  }
  return steps;
}

TEST(RuleStage, StepsEvaluatedAtOnceGiveTheSerialEventsInStepOrder) {
  TempDir dir;
  const auto trial = write_simulated_job(dir.path(), kSteps);

  Shared serial_shared;
  const OneRuleReplay serial = replay(trial, 1, serial_shared);
  EXPECT_EQ(serial_shared.instances_used.size(), 1u);  // one thread: one instance evaluates

  // Two threads at least (CI's machines have two cores; the pipeline takes no more threads
  // than the machine has): step 0 waits on one instance while another evaluates step 1.
  Shared shared(30s);
  const OneRuleReplay parallel = replay(trial, 4, shared);
  ASSERT_TRUE(shared.gate.overtaken()) << "step 1 never finished while step 0 was being evaluated";
  EXPECT_GE(shared.instances_used.size(), 2u);

  // Odd steps 1..11, in step order, though step 1 finished before step 0.
  const std::vector<std::int64_t> odd{1, 3, 5, 7, 9, 11};
  EXPECT_EQ(fired_steps(serial), odd);
  EXPECT_EQ(fired_steps(parallel), odd);
  ASSERT_EQ(parallel.events.size(), serial.events.size());
  for (std::size_t i = 0; i < serial.events.size(); ++i) {
    EXPECT_EQ(parallel.events[i].kind, serial.events[i].kind) << i;
    EXPECT_EQ(parallel.events[i].global_step, serial.events[i].global_step) << i;
    EXPECT_EQ(parallel.events[i].message, serial.events[i].message) << i;
  }
  ASSERT_FALSE(parallel.events.empty());
  const RuleEvent& status = parallel.events.back();
  EXPECT_EQ(status.kind, RuleEvent::Kind::Status);
  EXPECT_EQ(status.status, RuleStatus::IssuesFound);
  EXPECT_EQ(status.steps_evaluated, kSteps);
  EXPECT_EQ(status.times_fired, 6);
  EXPECT_EQ(parallel.report.conditions_met, 6);
  // The evaluating time is every instance's work; the serial node only put outcomes in order
  // (and handed events to the sink), far less than the evaluating.
  ASSERT_EQ(parallel.report.rule_busy.size(), 1u);
  ASSERT_EQ(parallel.report.rule_serial_busy.size(), 1u);
  EXPECT_GE(parallel.report.rule_busy[0], kSteps * kWorkPerStep);
  EXPECT_LT(parallel.report.rule_serial_busy[0], parallel.report.rule_busy[0] / 2);
  // One thread: every evaluation is the serial node's.
  ASSERT_EQ(serial.report.rule_serial_busy.size(), 1u);
  EXPECT_GE(serial.report.rule_serial_busy[0], serial.report.rule_busy[0]);
}

// An error ends the rule at its step, as in the serial form: steps after it that other instances
// evaluated meanwhile report nothing.
TEST(RuleStage, AnErrorEndsTheRuleAtItsStepThoughLaterStepsWereEvaluated) {
  TempDir dir;
  const auto trial = write_simulated_job(dir.path(), kSteps);
  for (const int threads : {1, 4}) {
    Shared shared;
    shared.fail_at = 4;
    const OneRuleReplay run = replay(trial, threads, shared);
    EXPECT_EQ(fired_steps(run), (std::vector<std::int64_t>{1, 3})) << threads << " threads";
    ASSERT_FALSE(run.events.empty());
    const RuleEvent& status = run.events.back();
    EXPECT_EQ(status.status, RuleStatus::Error) << threads << " threads";
    EXPECT_NE(status.message.find("at step 4: broken on purpose"), std::string::npos)
        << status.message;
    EXPECT_EQ(status.steps_evaluated, 4) << threads << " threads";  // steps 0 to 3
    EXPECT_TRUE(run.report.rule_errors);
  }
}

}  // namespace
}  // namespace rulestream
