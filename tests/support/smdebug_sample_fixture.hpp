#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "tests/support/mismatch_log.hpp"
#include "tests/support/smdebug_expected.hpp"
#include "trial/api/trial.hpp"

namespace rulestream::testing {

// Base of the conformance suites: one instance per trial folder under smdebug-samples/trials,
// with the opened trial and its expected file (loaded once per process).
class SmdebugSampleTest : public ::testing::TestWithParam<SampleTrial> {
 protected:
  void SetUp() override {
    if (GetParam().name.empty()) {
      GTEST_SKIP() << "smdebug-samples not found: set RULESTREAM_SAMPLES or place them at "
                      "../shared/smdebug-samples beside the project";
    }
    sample_ = load_sample(GetParam());
  }

  const Trial& trial() const { return sample_->trial; }
  const boost::json::object& expected() const { return sample_->expected; }
  Where where() const { return Where{sample_->name, {}, {}, Mode::Global, {}}; }

  std::shared_ptr<const LoadedSample> sample_;
};

}  // namespace rulestream::testing

// Instantiates a suite derived from SmdebugSampleTest once per sample trial.
#define RULESTREAM_INSTANTIATE_FOR_SAMPLES(Suite)                                                 \
  INSTANTIATE_TEST_SUITE_P(                                                                       \
      Samples, Suite, ::testing::ValuesIn(::rulestream::testing::sample_trials_or_placeholder()), \
      [](const ::testing::TestParamInfo<::rulestream::testing::SampleTrial>& sample) {            \
        return ::rulestream::testing::sample_test_name(sample.param);                             \
      })
