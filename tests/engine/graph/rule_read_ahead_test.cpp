// Rules that keep state but read each step on its own (Rule::reads_ahead) have their steps read
// several at once, on other threads, while the rule judges earlier ones in order (RuleStage):
// the events, statuses and errors must be those of the serial form, whatever order the readings
// finish in, and only the judging may count as the rule's serial work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/model/busy_timer.hpp"
#include "core/model/exceptions.hpp"
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
constexpr std::chrono::milliseconds kReadPerStep{1};

// What the test rule's readings and judgings share with the test.
struct Shared {
  explicit Shared(std::chrono::milliseconds wait_for_step_one = {}) : gate(wait_for_step_one) {}
  OvertakingGate gate;                      // step 0's reading waits for step 1's
  std::atomic<int> judging{0};              // judgings under way now
  std::atomic<bool> judged_at_once{false};  // two were ever under way together
  std::atomic<std::int64_t> last_judged{-1};
  std::atomic<bool> out_of_order{false};  // a step judged after a later one
  std::optional<std::int64_t> skip_at;    // read_step: nothing the rule reads at this step
  std::optional<std::int64_t> fail_at;    // read_step throws at this step
};

struct StepNumber final : StepReading {
  std::int64_t step = 0;
};

// Adds up the steps it is judged at, in order, and fires whenever the running sum passes a
// multiple of 10, naming the sum: an event that says whether the judging saw every earlier step,
// in order. Reading a step costs a millisecond of CPU.
class RunningSumRule final : public Rule {
 public:
  RunningSumRule(Trial trial, Shared& shared) : Rule(std::move(trial)), shared_(shared) {}
  std::string_view name() const override { return "RunningSum"; }
  bool reads_ahead() const override { return true; }

  std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const override {
    if (!trial.is_pinned()) throw std::logic_error("a step is read from a pinned view");
    const auto start = BusyTimer::now();
    while (BusyTimer::now() - start < kReadPerStep) {
    }
    shared_.gate.finished(step);
    if (shared_.skip_at && step == *shared_.skip_at) {
      throw TensorUnavailableForStep("anything", step, Mode::Global);
    }
    if (shared_.fail_at && step == *shared_.fail_at) throw std::runtime_error("broken on purpose");
    auto reading = std::make_unique<StepNumber>();
    reading->step = step;
    return reading;
  }

  bool invoke_at_step(std::int64_t step) override {
    if (shared_.judging.fetch_add(1) != 0) shared_.judged_at_once = true;
    struct Leave {
      Shared& shared;
      ~Leave() { shared.judging.fetch_sub(1); }
    } leave{shared_};
    const auto read = reading(step);
    const auto& number = static_cast<const StepNumber&>(*read);
    if (number.step != step) throw std::logic_error("judged from another step's reading");
    if (shared_.last_judged.exchange(step) > step) shared_.out_of_order = true;
    const std::int64_t before = sum_;
    sum_ += step;
    if (sum_ / 10 == before / 10) return false;
    report({.tensors = {}, .figures = {}, .message = "sum " + std::to_string(sum_)});
    return true;
  }

 private:
  Shared& shared_;
  std::int64_t sum_ = 0;
};

OneRuleReplay replay(const std::filesystem::path& trial, int threads, Shared& shared) {
  return replay_one_rule(
      trial, threads, "RunningSum", [&shared](const RuleContext& context, const RuleParameters&) {
        return std::unique_ptr<Rule>(new RunningSumRule(context.base_trial, shared));
      });
}

std::vector<std::string> messages(const OneRuleReplay& run) {
  std::vector<std::string> texts;
  for (const RuleEvent& event : run.events) {
    if (event.kind == RuleEvent::Kind::ConditionMet) {
      texts.push_back(std::to_string(event.global_step) + ": " + event.message);
    }
  }
  return texts;
}

TEST(RuleReadAhead, StepsReadAtOnceAreJudgedInOrderAsOneThreadWould) {
  TempDir dir;
  const auto trial = write_simulated_job(dir.path(), kSteps);

  Shared serial_shared;
  const OneRuleReplay serial = replay(trial, 1, serial_shared);

  // Two threads at least (CI's machines have two cores): step 0's reading waits while another
  // thread reads step 1.
  Shared shared(30s);
  const OneRuleReplay ahead = replay(trial, 4, shared);
  ASSERT_TRUE(shared.gate.overtaken()) << "step 1 was never read while step 0's reading waited";
  EXPECT_FALSE(shared.judged_at_once);
  EXPECT_FALSE(shared.out_of_order);

  // Sums 0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66: past a multiple of 10 at steps 4, 6, 8, 9,
  // 10 and 11.
  const std::vector<std::string> expected{"4: sum 10", "6: sum 21",  "8: sum 36",
                                          "9: sum 45", "10: sum 55", "11: sum 66"};
  EXPECT_EQ(messages(serial), expected);
  EXPECT_EQ(messages(ahead), expected);
  ASSERT_FALSE(ahead.events.empty());
  const RuleEvent& status = ahead.events.back();
  EXPECT_EQ(status.kind, RuleEvent::Kind::Status);
  EXPECT_EQ(status.status, RuleStatus::IssuesFound);
  EXPECT_EQ(status.steps_evaluated, kSteps);
  EXPECT_EQ(status.times_fired, 6);

  // The reading is the rule's work but not its serial node's: the node only judged.
  ASSERT_EQ(ahead.report.rule_busy.size(), 1u);
  ASSERT_EQ(ahead.report.rule_serial_busy.size(), 1u);
  EXPECT_GE(ahead.report.rule_busy[0], kSteps * kReadPerStep);
  EXPECT_LT(ahead.report.rule_serial_busy[0], ahead.report.rule_busy[0] / 2);
  // One thread: the serial form, every reading on the rule's own node.
  ASSERT_EQ(serial.report.rule_serial_busy.size(), 1u);
  EXPECT_GE(serial.report.rule_serial_busy[0], kSteps * kReadPerStep);
}

// smdebug's invoke_rule, outside any pipeline, reads each step where it judges it.
TEST(RuleReadAhead, InvokeRuleReadsAndJudgesEachStepInTurn) {
  TempDir dir;
  const auto trial = write_simulated_job(dir.path(), kSteps);
  Shared shared;
  RunningSumRule rule(Trial::open(trial.string()), shared);
  const InvokeResult result = invoke_rule(rule, 0, kSteps);
  EXPECT_EQ(result.triggered_steps, (std::vector<std::int64_t>{4, 6, 8, 9, 10, 11}));
  EXPECT_EQ(result.steps_evaluated, kSteps);
}

// What reading a step threw is thrown where the serial form threw it: a step without what the
// rule reads is skipped (and the running sum leaves it out); an error ends the rule at its step,
// though later steps were read meanwhile.
TEST(RuleReadAhead, WhatAReadingThrewCountsAtItsStep) {
  TempDir dir;
  const auto trial = write_simulated_job(dir.path(), kSteps);
  for (const int threads : {1, 4}) {
    Shared skipping;
    skipping.skip_at = 4;
    const OneRuleReplay skipped = replay(trial, threads, skipping);
    // Sums without step 4: 0, 1, 3, 6, 6, 11, 17, 24, 32, 41, 51, 62.
    EXPECT_EQ(messages(skipped),
              (std::vector<std::string>{"5: sum 11", "7: sum 24", "8: sum 32", "9: sum 41",
                                        "10: sum 51", "11: sum 62"}))
        << threads << " threads";
    ASSERT_FALSE(skipped.events.empty());
    EXPECT_EQ(skipped.events.back().steps_evaluated, kSteps - 1) << threads << " threads";

    Shared failing;
    failing.fail_at = 7;
    const OneRuleReplay failed = replay(trial, threads, failing);
    EXPECT_EQ(messages(failed), (std::vector<std::string>{"4: sum 10", "6: sum 21"}))
        << threads << " threads";
    ASSERT_FALSE(failed.events.empty());
    const RuleEvent& status = failed.events.back();
    EXPECT_EQ(status.status, RuleStatus::Error) << threads << " threads";
    EXPECT_NE(status.message.find("at step 7: broken on purpose"), std::string::npos)
        << status.message;
    EXPECT_EQ(status.steps_evaluated, 7) << threads << " threads";  // steps 0 to 6
    EXPECT_TRUE(failed.report.rule_errors);
  }
}

}  // namespace
}  // namespace rulestream
