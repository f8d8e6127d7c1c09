// Tensor::combined_reductions / combined_reduction on multi-worker trials written by the
// project's own writer: whole-job figures equal the figures of every worker's elements
// concatenated, with smdebug's exceptions for steps that are missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "stages/format/trial_writer.hpp"
#include "stages/reduce/reductions.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

constexpr char kGradient[] = "gradient/fc.weight";

CollectionsFile collections(int num_workers) {
  CollectionsFile file;
  Collection gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  file.collections["gradients"] = gradients;
  file.num_workers = num_workers;
  return file;
}

TrialOptions quick_options() {
  TrialOptions options;
  options.end_of_job_grace = std::chrono::milliseconds(0);
  options.poll_interval = std::chrono::milliseconds(10);
  return options;
}

TensorValue float64s(const std::vector<double>& values) {
  return TensorValue::from_values(DType::Float64, Shape{static_cast<std::int64_t>(values.size())},
                                  values);
}

TensorValue scalar64(double value) {
  return TensorValue::from_values(DType::Float64, Shape{}, std::vector<double>{value});
}

// Values of one worker at one step: a size and a centre of its own, so that means, variances
// and norms differ between workers and a wrong weighting shows.
std::vector<double> worker_values(std::int64_t step, int worker) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(step * 10 + worker));
  std::normal_distribution<double> normal(3.0 * worker - 2.0 + 0.1 * static_cast<double>(step),
                                          0.5 + worker);
  std::vector<double> values(static_cast<std::size_t>(5 + 37 * worker + step));
  for (double& value : values) value = normal(rng);
  return values;
}

std::vector<double> concatenated(std::int64_t step, int workers) {
  std::vector<double> all;
  for (int worker = 0; worker < workers; ++worker) {
    const auto values = worker_values(step, worker);
    all.insert(all.end(), values.begin(), values.end());
  }
  return all;
}

std::string worker_name(int worker) {
  return "worker_" + std::to_string(worker);
}

// Three workers saving the gradient at TRAIN steps 0..2, then an EVAL step 3 without it; global
// step 5 is never saved. Workers begin in reverse name order, so load order is not name order.
void write_three_workers(const std::filesystem::path& root) {
  for (int worker = 2; worker >= 0; --worker) {
    TrialWriter writer({.root = root, .worker = worker_name(worker)});
    for (std::int64_t step = 0; step < 3; ++step) {
      writer.begin_step(step, Mode::Train, step);
      writer.add_tensor(kGradient, float64s(worker_values(step, worker)));
      writer.end_step();
    }
    writer.begin_step(3, Mode::Eval, 0);
    writer.add_tensor("loss", scalar64(1.0));
    writer.end_step();
    writer.write_collections(collections(3));
    if (worker == 0) writer.write_end_marker();
  }
}

void expect_close(const Scalar& ours, const Scalar& expected, const std::string& what) {
  EXPECT_EQ(ours.dtype(), expected.dtype()) << what;
  const double a = ours.as_double();
  const double b = expected.as_double();
  EXPECT_LE(std::fabs(a - b), 1e-12 * std::fabs(b)) << what << ": " << a << " vs " << b;
}

TEST(CombinedReductions, EqualTheFiguresOfEveryWorkersValuesTogether) {
  TempDir dir;
  write_three_workers(dir.path());
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Tensor gradient = trial.tensor(kGradient);
  ASSERT_EQ(gradient.workers(0).size(), 3u);

  for (std::int64_t step = 0; step < 3; ++step) {
    const ReductionSet expected = compute_reductions(float64s(concatenated(step, 3)));
    const ReductionSet combined = gradient.combined_reductions(step);
    for (int index = 0; index < kReductionKeyCount; ++index) {
      const ReductionKey key = ReductionKey::from_index(index);
      const std::string what = "step " + std::to_string(step) + " " + reduction_key_name(key);
      ASSERT_TRUE(combined.get(key).has_value()) << what;
      expect_close(*combined.get(key), *expected.get(key), what);
      expect_close(gradient.combined_reduction(step, key.reduction, Mode::Global, key.abs),
                   *expected.get(key), what + " (one figure)");
    }
    // Not any one worker's figure: the first worker's l2 is far below the whole job's.
    EXPECT_LT(gradient.reduction_value(step, Reduction::L2).as_double(),
              0.5 * gradient.combined_reduction(step, Reduction::L2).as_double());
  }
  // Mode steps address the same data.
  expect_close(gradient.combined_reduction(2, Reduction::Variance, Mode::Train),
               *compute_reductions(float64s(concatenated(2, 3))).get({Reduction::Variance}),
               "TRAIN step 2 variance");
}

TEST(CombinedReductions, MissingStepsRaiseAsValueDoes) {
  TempDir dir;
  write_three_workers(dir.path());
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Tensor gradient = trial.tensor(kGradient);
  // EVAL step 3 saved no gradient; step 4 was never saved and the job has ended.
  try {
    gradient.combined_reduction(3, Reduction::Mean);
    FAIL() << "a figure at a step without the tensor";
  } catch (const TensorUnavailableForStep& error) {
    EXPECT_EQ(error.tensor(), kGradient);
    EXPECT_EQ(error.step(), 3);
  }
  EXPECT_THROW(gradient.combined_reductions(3), TensorUnavailableForStep);
  EXPECT_THROW(gradient.combined_reductions(4), StepUnavailable);
  EXPECT_THROW(gradient.combined_reduction(4, Reduction::Max), StepUnavailable);
  EXPECT_THROW(gradient.combined_reduction(7, Reduction::Max, Mode::Train), StepUnavailable);
}

// worker_0 saves the value; worker_1 saves reductions (and, at step 0 only, the shape), as a
// hook with reduction configs does.
void write_value_and_reductions(const std::filesystem::path& root, const std::vector<double>& raw,
                                const std::vector<double>& reduced) {
  TrialWriter values({.root = root, .worker = "worker_0"});
  TrialWriter reductions({.root = root, .worker = "worker_1"});
  const ReductionSet figures = compute_reductions(float64s(reduced));
  for (std::int64_t step = 0; step < 2; ++step) {
    values.begin_step(step, Mode::Train, step);
    values.add_tensor(kGradient, float64s(raw));
    values.end_step();
    reductions.begin_step(step, Mode::Train, step);
    for (const Reduction reduction : kAllReductions) {
      for (const bool abs : {false, true}) {
        reductions.add_reduction(kGradient, {reduction, abs},
                                 scalar64(figures.get({reduction, abs})->as_double()));
      }
    }
    if (step == 0) reductions.add_shape(kGradient, {static_cast<std::int64_t>(reduced.size())});
    reductions.end_step();
  }
  values.write_collections(collections(2));
  reductions.write_collections(collections(2));
  values.write_end_marker();
}

TEST(CombinedReductions, AWorkerThatSavedOnlyReductionsContributesThem) {
  TempDir dir;
  const std::vector<double> raw = {1.0, -2.0, 3.5, 0.25};
  const std::vector<double> reduced = {10.0, 11.0, -9.0, 4.0, 6.0, 2.5};
  write_value_and_reductions(dir.path(), raw, reduced);
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Tensor gradient = trial.tensor(kGradient);

  std::vector<double> all = raw;
  all.insert(all.end(), reduced.begin(), reduced.end());
  const ReductionSet expected = compute_reductions(float64s(all));
  const ReductionSet combined = gradient.combined_reductions(0);
  for (int index = 0; index < kReductionKeyCount; ++index) {
    const ReductionKey key = ReductionKey::from_index(index);
    if (key.reduction == Reduction::Std || key.reduction == Reduction::Variance) {
      // Saved std/variance may be sample figures (the PyTorch hook's ddof = 1): never combined.
      EXPECT_FALSE(combined.get(key).has_value()) << reduction_key_name(key);
      continue;
    }
    ASSERT_TRUE(combined.get(key).has_value()) << reduction_key_name(key);
    expect_close(*combined.get(key), *expected.get(key), reduction_key_name(key));
  }
  try {
    gradient.combined_reduction(0, Reduction::Std);
    FAIL() << "a combined std from a saved std";
  } catch (const TensorUnavailableForStep& error) {
    EXPECT_NE(std::string(error.what()).find("no combined std: worker_1 saved only reductions"),
              std::string::npos)
        << error.what();
  }

  // Step 1: no saved shape, so worker_1's element count is unknown: no mean, but min and l2.
  EXPECT_EQ(gradient.combined_reduction(1, Reduction::Min).as_double(), -9.0);
  expect_close(gradient.combined_reduction(1, Reduction::L2), *expected.get({Reduction::L2}),
               "step 1 l2");
  try {
    gradient.combined_reduction(1, Reduction::Mean, Mode::Global, true);
    FAIL() << "a combined mean without a count";
  } catch (const TensorUnavailableForStep& error) {
    EXPECT_EQ(error.tensor(), kGradient);
    EXPECT_NE(std::string(error.what())
                  .find("no combined abs_mean: worker_1 saved only "
                        "reductions and no shape"),
              std::string::npos)
        << error.what();
  }
}

TEST(CombinedReductions, Float32KeepsItsDtypeAndMixedDtypesAreRefused) {
  TempDir dir;
  {
    TrialWriter first({.root = dir.path(), .worker = "worker_0"});
    TrialWriter second({.root = dir.path(), .worker = "worker_1"});
    first.begin_step(0, Mode::Train, 0);
    first.add_tensor(kGradient, TensorValue::from_values(DType::Float32, Shape{2},
                                                         std::vector<float>{1.5f, -4.0f}));
    first.end_step();
    second.begin_step(0, Mode::Train, 0);
    second.add_tensor(kGradient, TensorValue::from_values(DType::Float32, Shape{3},
                                                          std::vector<float>{2.0f, 8.0f, 0.5f}));
    second.end_step();
    first.begin_step(1, Mode::Train, 1);
    first.add_tensor(kGradient,
                     TensorValue::from_values(DType::Float32, Shape{1}, std::vector<float>{1.0f}));
    first.end_step();
    second.begin_step(1, Mode::Train, 1);
    second.add_tensor(kGradient, float64s({1.0}));
    second.end_step();
    first.write_collections(collections(2));
    second.write_collections(collections(2));
    first.write_end_marker();
  }
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Tensor gradient = trial.tensor(kGradient);
  const Scalar sum = gradient.combined_reduction(0, Reduction::Sum);
  EXPECT_EQ(sum, Scalar::of_double(DType::Float32, 8.0));
  EXPECT_EQ(gradient.combined_reduction(0, Reduction::Max, Mode::Global, true),
            Scalar::of_double(DType::Float32, 8.0));
  EXPECT_EQ(gradient.combined_reduction(0, Reduction::Mean),
            Scalar::of_double(DType::Float32, 1.6));
  try {
    gradient.combined_reduction(1, Reduction::Max);
    FAIL() << "float32 and float64 workers were combined";
  } catch (const TensorUnavailableForStep& error) {
    EXPECT_NE(std::string(error.what()).find("worker_0 saved float32 but worker_1 saved float64"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(!gradient.combined_reductions(1).get({Reduction::Max}).has_value());
}

TEST(CombinedReductions, ALaggingWorkerIsLeftOutUntilItLands) {
  TempDir dir;
  TrialWriter fast({.root = dir.path(), .worker = "worker_0"});
  TrialWriter slow({.root = dir.path(), .worker = "worker_1"});
  fast.write_collections(collections(2));
  slow.write_collections(collections(2));
  fast.begin_step(0, Mode::Train, 0);
  fast.add_tensor(kGradient, float64s({1.0, 2.0}));
  fast.end_step();

  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Tensor gradient = trial.tensor(kGradient);
  const Trial pinned = trial.pinned();
  EXPECT_EQ(gradient.combined_reduction(0, Reduction::Sum).as_double(), 3.0);

  slow.begin_step(0, Mode::Train, 0);
  slow.add_tensor(kGradient, float64s({10.0}));
  slow.end_step();
  // A live handle picks the late worker up; a pinned one keeps its answer.
  EXPECT_EQ(gradient.combined_reduction(0, Reduction::Sum).as_double(), 13.0);
  EXPECT_EQ(pinned.tensor(kGradient).combined_reduction(0, Reduction::Sum).as_double(), 3.0);
}

// The real two-worker DDP job: for every tensor both workers saved as values, the combined
// figures against the figures of both workers' float32 elements concatenated. Each worker's
// figures are already rounded to float32, so sums and means are owed float32 accuracy relative
// to the magnitudes they were summed from (gradients' parts can nearly cancel); extremes are
// exact. prod is left out: a worker's float32 product can underflow to a subnormal or to 0
// where the whole tensor's product, taken in double, is still representable.
TEST(CombinedReductions, RealTwoWorkerJobMatchesItsConcatenatedValues) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found: no real two-worker trial to check";
  const Trial trial = Trial::open((*samples / "trials" / "pt-ddp-2workers").string());
  int checked = 0;
  for (const std::string& name : trial.tensor_names()) {
    const Tensor tensor = trial.tensor(name);
    const auto steps = tensor.steps();
    for (std::size_t i = 0; i < std::min<std::size_t>(steps.size(), 2); ++i) {
      const std::int64_t step = steps[i];
      const auto workers = tensor.workers(step);
      if (workers.size() != 2) continue;
      std::vector<float> all;
      for (const std::string& worker : workers) {
        const TensorValue value = tensor.value(step, Mode::Global, worker);
        ASSERT_EQ(value.dtype(), DType::Float32) << name;
        const auto elements = value.elements<float>();
        for (std::size_t e = 0; e < elements.size(); ++e) all.push_back(elements[e]);
      }
      const ReductionSet expected = compute_reductions(TensorValue::from_values(
          DType::Float32, Shape{static_cast<std::int64_t>(all.size())}, all));
      const ReductionSet combined = tensor.combined_reductions(step);
      const auto figure = [&](Reduction reduction, bool abs) {
        return expected.get({reduction, abs})->as_double();
      };
      for (const bool abs : {false, true}) {
        const double squares = figure(Reduction::Variance, abs) +
                               figure(Reduction::Mean, abs) * figure(Reduction::Mean, abs);
        const std::map<Reduction, double> magnitude = {
            {Reduction::Min, 0.0},
            {Reduction::Max, 0.0},
            {Reduction::Sum, figure(Reduction::L1, abs)},
            {Reduction::Mean, figure(Reduction::Mean, true)},
            {Reduction::L1, figure(Reduction::L1, abs)},
            {Reduction::L2, figure(Reduction::L2, abs)},
            {Reduction::Variance, squares},
            {Reduction::Std, std::sqrt(squares)}};
        for (const auto& [reduction, scale] : magnitude) {
          const ReductionKey key{reduction, abs};
          const std::string what =
              name + " step " + std::to_string(step) + " " + reduction_key_name(key);
          ASSERT_TRUE(combined.get(key).has_value()) << what;
          EXPECT_EQ(combined.get(key)->dtype(), DType::Float32) << what;
          EXPECT_LE(std::fabs(combined.get(key)->as_double() - figure(reduction, abs)),
                    1e-5 * scale)
              << what << ": " << combined.get(key)->as_double() << " vs " << figure(reduction, abs);
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 10) << "too few tensors saved by both workers to say anything";
}

}  // namespace
}  // namespace rulestream
