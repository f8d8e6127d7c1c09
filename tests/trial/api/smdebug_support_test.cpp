// The conformance suite's own machinery (tests/support): precise JSON numbers, the reference
// reductions and float16 rounding, the failure log and the rules that decide when rulestream
// is compared with smdebug and when with the reference. A suite that cannot fail proves
// nothing, so each rule is shown to fail on a wrong answer too.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/mismatch_log.hpp"
#include "tests/support/precise_json.hpp"
#include "tests/support/reduction_checks.hpp"
#include "tests/support/reference_reductions.hpp"
#include "tests/support/smdebug_errors.hpp"
#include "tests/support/smdebug_live_checks.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

double from_text(std::string_view text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

TEST(PreciseJson, NumbersAreCorrectlyRounded) {
  // Boost.JSON 1.81's own parser reads these one ulp off.
  for (const char* text : {"1.3477421998977661", "0.24465365707874298", "-0.18892420828342438",
                           "1.3585947751998901", "5e-324", "1.7976931348623157e308"}) {
    SCOPED_TRACE(text);
    const json::value parsed = parse_json_precisely(std::string("[") + text + "]", "test");
    EXPECT_EQ(parsed.as_array()[0].as_double(), from_text(text));
  }
}

TEST(PreciseJson, KeepsTheDocumentShape) {
  const json::value parsed = parse_json_precisely(
      R"({"a": [1, -2, 18446744073709551615, 2.5, "s\u00e9", true, null], "b": {}})", "test");
  EXPECT_EQ(parsed, json::parse(R"({"a": [1, -2, 18446744073709551615, 2.5, "s\u00e9", true,
                                  null], "b": {}})"));
  EXPECT_TRUE(parsed.as_object().at("a").as_array()[2].is_uint64());
}

TEST(PreciseJson, RejectsMalformedText) {
  EXPECT_THROW(parse_json_precisely("{\"a\": }", "bad.json"), std::runtime_error);
  EXPECT_THROW(parse_json_precisely("[1] [2]", "bad.json"), std::runtime_error);
}

TEST(Float16, DecodesEveryKindOfNumber) {
  EXPECT_EQ(float16_to_double(0x3c00), 1.0);
  EXPECT_EQ(float16_to_double(0xc000), -2.0);
  EXPECT_EQ(float16_to_double(0x7bff), 65504.0);
  EXPECT_EQ(float16_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(float16_to_double(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(float16_to_double(0xfc00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(float16_to_double(0x7e00)));
  EXPECT_TRUE(std::signbit(float16_to_double(0x8000)));
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(round_to_float16(1.0L), 1.0);
  EXPECT_EQ(round_to_float16(1.0L + std::ldexp(1.0L, -11)), 1.0);  // tie, to even
  EXPECT_EQ(round_to_float16(1.0L + 3 * std::ldexp(1.0L, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(round_to_float16(65519.0L), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_float16(65520.0L)));      // the tie above the largest rounds up
  EXPECT_EQ(round_to_float16(std::ldexp(1.0L, -25)), 0.0);  // half the smallest subnormal
  EXPECT_EQ(round_to_float16(3 * std::ldexp(1.0L, -25)), std::ldexp(1.0, -23));
  EXPECT_EQ(round_to_float16(-2.5L), -2.5);
}

TensorValue int_tensor(DType dtype, const std::vector<std::int64_t>& values) {
  if (dtype == DType::Int8) {
    std::vector<std::int8_t> narrow(values.begin(), values.end());
    return TensorValue::from_values(dtype, {static_cast<std::int64_t>(values.size())}, narrow);
  }
  return TensorValue::from_values(dtype, {static_cast<std::int64_t>(values.size())}, values);
}

TEST(ReferenceReductions, IntegerSumAndProductAreExact) {
  const DecodedElements elements =
      decode_elements(int_tensor(DType::Int64, {std::int64_t{1} << 40, std::int64_t{1} << 40, -3}));
  const ReferenceReduction prod = reference_reduction(elements, {Reduction::Prod, false});
  EXPECT_TRUE(prod.overflows);
  EXPECT_EQ(prod.dtype, DType::Float64);
  EXPECT_EQ(prod.value, -3 * std::ldexp(1.0L, 80));
  EXPECT_EQ(prod.wrapped, 0u);  // 2^80 * -3 modulo 2^64
  const ReferenceReduction sum = reference_reduction(elements, {Reduction::Sum, false});
  EXPECT_FALSE(sum.overflows);
  EXPECT_EQ(sum.dtype, DType::Int64);
  EXPECT_TRUE(sum.exact.has_value() && *sum.exact == (Int128{1} << 41) - 3);
}

TEST(ReferenceReductions, ProductWithAZeroIsZeroWhateverCameBefore) {
  const DecodedElements elements = decode_elements(
      int_tensor(DType::Int64, {std::numeric_limits<std::int64_t>::max(), 7, 0, 5}));
  const ReferenceReduction prod = reference_reduction(elements, {Reduction::Prod, false});
  EXPECT_FALSE(prod.overflows);
  EXPECT_TRUE(prod.exact.has_value() && *prod.exact == 0);
}

TEST(ReferenceReductions, Int8AbsoluteValuesDoNotWrap) {
  const DecodedElements elements = decode_elements(int_tensor(DType::Int8, {-128, 5}));
  EXPECT_TRUE(*reference_reduction(elements, {Reduction::Max, true}).exact == 128);
  EXPECT_TRUE(*reference_reduction(elements, {Reduction::Sum, true}).exact == 133);
  EXPECT_EQ(reference_reduction(elements, {Reduction::Mean, false}).dtype, DType::Float64);
}

TEST(ReferenceReductions, PopulationMomentsAndElementwiseNorms) {
  const TensorValue value =
      TensorValue::from_values(DType::Float32, {2, 2}, std::vector<float>{1, -2, 3, -4});
  const DecodedElements elements = decode_elements(value);
  EXPECT_EQ(reference_reduction(elements, {Reduction::Variance, false}).value, 7.25L);
  EXPECT_EQ(reference_reduction(elements, {Reduction::Variance, true}).value, 1.25L);
  EXPECT_EQ(reference_reduction(elements, {Reduction::L1, false}).value, 10.0L);
  EXPECT_EQ(reference_reduction(elements, {Reduction::L2, false}).value, std::sqrt(30.0L));
  EXPECT_EQ(reference_reduction(elements, {Reduction::L2, false}).dtype, DType::Float32);
}

TEST(ReferenceReductions, NumpyResultDtypes) {
  EXPECT_EQ(numpy_result_dtype(DType::UInt8, {Reduction::Sum, false}), DType::UInt64);
  EXPECT_EQ(numpy_result_dtype(DType::Bool, {Reduction::Prod, false}), DType::Int64);
  EXPECT_EQ(numpy_result_dtype(DType::Bool, {Reduction::Max, true}), DType::Bool);
  EXPECT_EQ(numpy_result_dtype(DType::Int32, {Reduction::Std, false}), DType::Float64);
  EXPECT_EQ(numpy_result_dtype(DType::Float16, {Reduction::Mean, false}), DType::Float16);
}

TEST(SmdebugErrors, MapsExceptionsToSmdebugClassNames) {
  EXPECT_EQ(capture([]() -> int { throw StepUnavailable(3, Mode::Train); }).error,
            "StepUnavailable");
  EXPECT_EQ(capture([]() -> int { throw TensorUnavailableForStep("t", 3, Mode::Global); }).error,
            "TensorUnavailableForStep");
  EXPECT_EQ(capture([]() -> int { throw ReductionUnsupported("strings"); }).error,
            "ReductionUnsupported");
  EXPECT_EQ(capture([] { return 4; }).value, 4);
}

// Runs `body` and returns the failures it reported.
template <typename Body>
std::vector<std::string> failures_of(Body body) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    body();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i)
    messages.push_back(results.GetTestPartResult(i).message());
  return messages;
}

TEST(MismatchLog, NamesWhereAndSummarisesTheRest) {
  const Where where{"pt-x", "t", 3, Mode::Train, "worker_0"};
  const auto messages = failures_of([&] {
    MismatchLog log(1);
    log.fail(where, "value.sha256", "differs");
    log.fail(where, "value.sha256", "differs again");
  });
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_NE(messages[0].find("trial pt-x, tensor 't', TRAIN step 3, worker_0, key 'value.sha256'"),
            std::string::npos)
      << messages[0];
  EXPECT_NE(messages[1].find("1 more mismatches of key 'value.sha256'"), std::string::npos)
      << messages[1];
}

// The rules of check_reduction, on a small float32 matrix.
class ReductionRules : public ::testing::Test {
 protected:
  std::vector<std::string> check(ReductionKey key, const std::string& expected_json,
                                 const Outcome<Scalar>& ours, bool saved = false) {
    const json::value expected = parse_json_precisely(expected_json, "test");
    return failures_of([&] {
      MismatchLog log;
      check_reduction(ReductionCase{key, expected, ours, saved, &value_, &elements_},
                      Where{"t", {}, {}, Mode::Global, {}}, log);
    });
  }
  static Outcome<Scalar> scalar(DType dtype, double v) {
    Outcome<Scalar> outcome;
    outcome.value = Scalar::of_double(dtype, v);
    return outcome;
  }

  TensorValue value_ =
      TensorValue::from_values(DType::Float32, {2, 2}, std::vector<float>{3, 0, 0, 4});
  DecodedElements elements_ = decode_elements(value_);
};

TEST_F(ReductionRules, MatrixNormsAreCheckedAgainstTheElementwiseNorm) {
  // smdebug's numpy gives the matrix 2-norm (4); the element-wise norm is 5.
  const std::string matrix_norm = R"({"dtype": "float32", "v": 4.0})";
  EXPECT_TRUE(check({Reduction::L2, false}, matrix_norm, scalar(DType::Float32, 5)).empty());
  EXPECT_EQ(check({Reduction::L2, false}, matrix_norm, scalar(DType::Float32, 4)).size(), 1u);
}

TEST_F(ReductionRules, ComputedReductionsUseTheTolerance) {
  const std::string mean = R"({"dtype": "float32", "v": 1.75})";
  EXPECT_TRUE(check({Reduction::Mean, false}, mean, scalar(DType::Float32, 1.7500001)).empty());
  EXPECT_EQ(check({Reduction::Mean, false}, mean, scalar(DType::Float32, 1.76)).size(), 1u);
  EXPECT_EQ(check({Reduction::Mean, false}, R"({"dtype": "float64", "v": 1.75})",
                  scalar(DType::Float32, 1.75))
                .size(),
            1u);  // dtype differs
}

TEST_F(ReductionRules, SavedReductionsAreExact) {
  const std::string saved = R"({"dtype": "float32", "v": -0.0})";
  EXPECT_TRUE(check({Reduction::Prod, false}, saved, scalar(DType::Float32, -0.0), true).empty());
  EXPECT_EQ(check({Reduction::Prod, false}, saved, scalar(DType::Float32, 0.0), true).size(), 1u);
}

TEST_F(ReductionRules, ErrorsMustMatchByName) {
  Outcome<Scalar> unavailable;
  unavailable.error = "TensorUnavailableForStep";
  const std::string error = R"({"error": "TensorUnavailableForStep"})";
  EXPECT_TRUE(failures_of([&] {
                MismatchLog log;
                const json::value expected = json::parse(error);
                check_reduction(ReductionCase{{Reduction::Mean, false}, expected, unavailable},
                                Where{"t", {}, {}, Mode::Global, {}}, log);
              }).empty());
  EXPECT_EQ(failures_of([&] {
              MismatchLog log;
              const json::value expected = json::parse(error);
              const Outcome<Scalar> ours = scalar(DType::Float32, 1);
              check_reduction(ReductionCase{{Reduction::Mean, false}, expected, ours},
                              Where{"t", {}, {}, Mode::Global, {}}, log);
            }).size(),
            1u);
}

TEST(ReductionRulesIntegers, WrappedSumsMustBeTheExactResultInFloat64) {
  const TensorValue value = int_tensor(DType::Int64, {std::numeric_limits<std::int64_t>::max(), 2});
  const DecodedElements elements = decode_elements(value);
  // numpy wraps: INT64_MAX + 2 == INT64_MIN + 1.
  const json::value expected = json::parse(R"({"dtype": "int64", "v": -9223372036854775807})");
  auto run = [&](const Scalar& ours) {
    Outcome<Scalar> outcome;
    outcome.value = ours;
    return failures_of([&] {
      MismatchLog log;
      check_reduction(
          ReductionCase{{Reduction::Sum, false}, expected, outcome, false, &value, &elements},
          Where{"t", {}, {}, Mode::Global, {}}, log);
    });
  };
  EXPECT_TRUE(run(Scalar::of_double(DType::Float64, 9223372036854775809.0)).empty());
  EXPECT_EQ(run(Scalar::of_int(DType::Int64, std::numeric_limits<std::int64_t>::min() + 1)).size(),
            2u);  // wrong dtype and wrong value
}

// The live-block checker against a job that is still "running": a copy of the two-worker
// sample without its end marker, where worker_1 has not written the last step yet. No sample
// has a live block today, so the block here is written from FORMAT.md's description of a
// live trial; it shows that every key the checker knows is checked, and fails when wrong.
class LiveBlockChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto samples = samples_dir();
    if (!samples) GTEST_SKIP() << "smdebug-samples not found";
    const auto source = *samples / "trials" / "pt-ddp-2workers";
    if (!std::filesystem::exists(source)) GTEST_SKIP() << "pt-ddp-2workers not in the samples";
    namespace fs = std::filesystem;
    fs::copy(source, dir_.path() / "trial", fs::copy_options::recursive);
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path())) {
      fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add);
    }
    const fs::path trial = dir_.path() / "trial";
    fs::remove(trial / "training_job_end.ts");
    for (const auto& entry : fs::directory_iterator(trial / "index" / "000000000")) {
      last_ = std::max(last_, std::stoll(entry.path().filename().string().substr(0, 12)));
    }
    char step[16];
    std::snprintf(step, sizeof step, "%012lld", last_);
    ASSERT_TRUE(fs::remove(trial / "index" / "000000000" / (std::string(step) + "_worker_1.json")));
    ASSERT_TRUE(fs::remove(trial / "events" / step / (std::string(step) + "_worker_1.tfevents")));
  }

  std::vector<std::string> failures_for(const std::string& live_json) {
    const Trial trial = Trial::open((dir_.path() / "trial").string());
    const json::value live = json::parse(live_json);
    return failures_of([&] {
      MismatchLog log;
      check_live_block(trial, live.as_object(), Where{"live-copy", {}, {}, Mode::Global, {}}, log);
    });
  }

  std::string correct_block() const {
    const std::string last = std::to_string(last_);
    const std::string beyond = std::to_string(last_ + 1000);
    return R"({"incomplete_steps": [)" + last + R"(],
               "has_training_ended": false,
               "loaded_all_steps": false,
               "workers_for_global_step": {")" +
           last + R"(": ["worker_0"]},
               "has_passed_step": [{"step": )" +
           last + R"(, "mode": "GLOBAL",
                                    "state": "NOT_YET_AVAILABLE"},
                                   {"step": )" +
           beyond + R"(, "state": "NOT_YET_AVAILABLE"}],
               "wait_for_steps": [{"steps": [)" +
           last + R"(], "outcome": "timeout"}],
               "values": [{"tensor": "CrossEntropyLoss_output_0", "step": )" +
           beyond + R"(,
                           "error": "StepNotYetAvailable"}]})";
  }

  TempDir dir_;
  long long last_ = -1;
};

TEST_F(LiveBlockChecks, AcceptsACorrectDescription) {
  const auto failures = failures_for(correct_block());
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
}

TEST_F(LiveBlockChecks, RejectsAWrongOneAndUnknownKeys) {
  EXPECT_EQ(failures_for(R"({"incomplete_steps": []})").size(), 1u);
  EXPECT_EQ(failures_for(R"({"wait_for_steps": [{"steps": [0], "outcome": "timeout"}]})").size(),
            1u);  // step 0 is there: wait_for_steps returns at once
  EXPECT_EQ(failures_for(R"({"mystery": 1})").size(), 1u);
}

}  // namespace
}  // namespace rulestream::testing
