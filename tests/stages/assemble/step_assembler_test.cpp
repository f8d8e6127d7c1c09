#include "stages/assemble/step_assembler.hpp"

#include <gtest/gtest.h>

namespace rulestream {
namespace {

using Ready = StepAssembler::Ready;
using namespace std::chrono_literals;

const auto t0 = StepAssembler::Clock::time_point{} + 1h;

TEST(StepAssembler, ReleasesAStepWhenEveryWorkerHasWrittenIt) {
  StepAssembler assembler(0ms);
  assembler.set_num_workers(2);
  assembler.landed(0, "worker_0", t0);
  EXPECT_TRUE(assembler.take_ready(t0).empty());
  assembler.landed(0, "worker_1", t0);
  EXPECT_EQ(assembler.take_ready(t0), (std::vector<Ready>{{0, false}}));
  EXPECT_TRUE(assembler.take_ready(t0).empty());  // each step once
}

TEST(StepAssembler, KeepsGlobalStepOrderWhateverTheLandingOrder) {
  StepAssembler assembler(0ms);
  assembler.set_num_workers(2);
  assembler.landed(2, "worker_1", t0);
  assembler.landed(2, "worker_0", t0);
  assembler.landed(1, "worker_0", t0);
  // Step 2 is complete, so step 1 can never complete: both go, 1 first, marked incomplete.
  EXPECT_EQ(assembler.take_ready(t0), (std::vector<Ready>{{1, true}, {2, false}}));
}

TEST(StepAssembler, ALaggingWorkerHoldsLaterStepsUntilItCatchesUp) {
  StepAssembler assembler(0ms);
  assembler.set_num_workers(2);
  for (int step = 0; step < 3; ++step) assembler.landed(step, "worker_0", t0);
  assembler.landed(0, "worker_1", t0);
  EXPECT_EQ(assembler.take_ready(t0), (std::vector<Ready>{{0, false}}));
  EXPECT_TRUE(assembler.take_ready(t0 + 1h).empty());  // no grace: wait
  assembler.landed(1, "worker_1", t0);
  EXPECT_EQ(assembler.take_ready(t0), (std::vector<Ready>{{1, false}}));
  EXPECT_EQ(assembler.pending(), 1u);
}

// A step whose files are still being read holds itself and every later step, and steps that
// landed past it neither go nor overtake an incomplete step before it.
TEST(StepAssembler, AHeldStepHoldsLaterStepsWhichOvertakeNothing) {
  StepAssembler assembler(0ms);
  assembler.set_num_workers(2);
  assembler.landed(0, "worker_0", t0);  // worker_1's step 0 is late
  for (int step = 3; step < 1000; ++step) {
    assembler.landed(step, "worker_0", t0);
    assembler.landed(step, "worker_1", t0);
  }
  EXPECT_TRUE(assembler.take_ready(t0, 3).empty()) << "0 is overtaken only by held steps";
  assembler.landed(2, "worker_0", t0);
  assembler.landed(2, "worker_1", t0);
  EXPECT_EQ(assembler.take_ready(t0, 3), (std::vector<Ready>{{0, true}, {2, false}}));
  EXPECT_EQ(assembler.pending(), 997u);
  const auto rest = assembler.take_ready(t0);
  ASSERT_EQ(rest.size(), 997u);
  EXPECT_EQ(rest.front().step, 3);
  EXPECT_EQ(rest.back().step, 999);
}

TEST(StepAssembler, GracePeriodReleasesIncompleteSteps) {
  StepAssembler assembler(500ms);
  assembler.set_num_workers(2);
  assembler.landed(0, "worker_0", t0);
  assembler.landed(1, "worker_0", t0 + 400ms);
  EXPECT_TRUE(assembler.take_ready(t0 + 499ms).empty());
  EXPECT_EQ(assembler.take_ready(t0 + 500ms), (std::vector<Ready>{{0, true}}));
  EXPECT_EQ(assembler.take_ready(t0 + 900ms), (std::vector<Ready>{{1, true}}));
}

TEST(StepAssembler, EndOfJobReleasesEverything) {
  StepAssembler assembler(0ms);
  assembler.set_num_workers(3);
  assembler.landed(5, "worker_0", t0);
  assembler.landed(7, "worker_2", t0);
  assembler.end_of_job();
  EXPECT_EQ(assembler.take_ready(t0), (std::vector<Ready>{{5, true}, {7, true}}));
}

TEST(StepAssembler, LateLandingsAreCountedNotReleasedAgain) {
  StepAssembler assembler(0ms);
  assembler.landed(3, "worker_0", t0);
  EXPECT_EQ(assembler.take_ready(t0), (std::vector<Ready>{{3, false}}));
  assembler.landed(2, "worker_0", t0);
  assembler.landed(3, "worker_0", t0);
  EXPECT_TRUE(assembler.take_ready(t0).empty());
  EXPECT_EQ(assembler.late_landings(), 2u);
}

}  // namespace
}  // namespace rulestream
