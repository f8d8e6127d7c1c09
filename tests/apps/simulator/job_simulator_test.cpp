#include "apps/simulator/job_simulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>

#include "core/model/exceptions.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

// Small jobs keep the suite fast; each test states only what it varies.
JobSimulatorOptions small_job(const std::filesystem::path& output, JobScenario scenario) {
  JobSimulatorOptions options;
  options.output = output;
  options.scenario = scenario;
  options.steps = 20;
  options.tensor_size = 64;
  // The middle of the default 20 steps; tests that shrink the job of a faulty scenario move it.
  if (scenario != JobScenario::Healthy) options.fault_step = 10;
  return options;
}

Trial simulate_and_open(const JobSimulatorOptions& options) {
  JobSimulator(options).run();
  TrialOptions trial_options;
  trial_options.auto_refresh = false;
  return Trial::open(options.output.string(), trial_options);
}

std::vector<float> floats(const TensorValue& value) {
  const auto view = value.elements<float>();
  std::vector<float> out(view.size());
  for (std::size_t i = 0; i < view.size(); ++i) out[i] = view[i];
  return out;
}

double abs_mean(const TensorValue& value) {
  double sum = 0;
  for (const float x : floats(value)) sum += std::fabs(x);
  return sum / static_cast<double>(value.size());
}

float loss_at(const Trial& trial, std::int64_t step, Mode mode = Mode::Global,
              const std::optional<std::string>& worker = std::nullopt) {
  const auto value = trial.tensor("CrossEntropyLoss_output_0").value(step, mode, worker);
  EXPECT_TRUE(value.shape().empty());
  return floats(value).at(0);
}

std::vector<std::string> gradient_names(const Trial& trial) {
  return trial.tensor_names({.step = std::nullopt,
                             .mode = Mode::Global,
                             .regex = {"^gradient/"},
                             .collection = std::nullopt});
}

TEST(JobScenarioTest, NamesRoundTrip) {
  for (const JobScenario scenario : kAllJobScenarios) {
    EXPECT_EQ(job_scenario_from_name(job_scenario_name(scenario)), scenario);
  }
  EXPECT_EQ(job_scenario_name(JobScenario::VanishingGradients), "vanishing_gradients");
  EXPECT_EQ(job_scenario_from_name("frozen_weights"), JobScenario::FrozenWeights);
  EXPECT_FALSE(job_scenario_from_name("Healthy"));
  EXPECT_FALSE(job_scenario_from_name(""));
}

TEST(JobSimulatorTest, WritesSmdebugPyTorchNamesAndCollections) {
  TempDir dir;
  const auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  const JobSimulator simulator(options);
  const std::vector<std::string> expected{"CrossEntropyLoss_output_0",
                                          "MLP_fc1.bias",
                                          "MLP_fc1.weight",
                                          "MLP_fc2.bias",
                                          "MLP_fc2.weight",
                                          "MLP_fc3.bias",
                                          "MLP_fc3.weight",
                                          "gradient/MLP_fc1.bias",
                                          "gradient/MLP_fc1.weight",
                                          "gradient/MLP_fc2.bias",
                                          "gradient/MLP_fc2.weight",
                                          "gradient/MLP_fc3.bias",
                                          "gradient/MLP_fc3.weight",
                                          "relu1_input_0",
                                          "relu1_output_0",
                                          "relu2_input_0",
                                          "relu2_output_0"};
  EXPECT_EQ(simulator.tensor_names(), expected);
  const auto summary = simulator.run();
  EXPECT_EQ(summary.tensor_count, expected.size());
  EXPECT_EQ(summary.global_steps, 20);
  EXPECT_EQ(summary.saved_steps, 20);
  EXPECT_EQ(summary.records, 20u * expected.size());
  EXPECT_GT(summary.event_bytes, 20u * 64u * 4u * 6u);

  const Trial trial = Trial::open(options.output.string());
  EXPECT_EQ(trial.tensor_names(), expected);
  EXPECT_TRUE(trial.has_training_ended());
  EXPECT_EQ(trial.num_workers(), 1);
  const auto collections = trial.collections();
  for (const char* name :
       {"all", "default", "weights", "biases", "gradients", "losses", "relu_activations"}) {
    EXPECT_TRUE(collections.contains(name)) << name;
  }
  EXPECT_EQ(collections.at("weights").include_regex,
            std::vector<std::string>{"^(?!gradient).*weight"});
  EXPECT_EQ(collections.at("weights").tensor_names,
            (std::set<std::string>{"MLP_fc1.weight", "MLP_fc2.weight", "MLP_fc3.weight"}));
  EXPECT_EQ(collections.at("losses").tensor_names,
            std::set<std::string>{"CrossEntropyLoss_output_0"});
  EXPECT_EQ(collections.at("gradients").tensor_names.size(), 6u);
  EXPECT_EQ(collections.at("relu_activations").tensor_names.size(), 4u);
  EXPECT_FALSE(collections.at("losses").save_histogram);
  EXPECT_EQ(collections.at("weights").save_config.at(Mode::Train)->save_interval, 1);

  // Shapes: weights [rows, cols] with rows * cols = tensor_size, activations [cols, rows].
  const auto weight = trial.tensor("MLP_fc2.weight").value(3);
  EXPECT_EQ(weight.dtype(), DType::Float32);
  EXPECT_EQ(weight.shape(), (Shape{8, 8}));
  EXPECT_EQ(trial.tensor("MLP_fc2.bias").value(3).shape(), Shape{8});
  EXPECT_EQ(trial.tensor("relu1_output_0").value(3).shape(), (Shape{8, 8}));
}

TEST(JobSimulatorTest, WeightShapeIsAsSquareAsTheSizeAllows) {
  JobSimulatorOptions options;
  options.output = "unused";
  options.tensor_size = 65536;
  EXPECT_EQ(JobSimulator(options).weight_shape(), (Shape{256, 256}));
  options.tensor_size = 640;
  EXPECT_EQ(JobSimulator(options).weight_shape(), (Shape{32, 20}));
  options.tensor_size = 7;
  EXPECT_EQ(JobSimulator(options).weight_shape(), (Shape{7, 1}));
  options.tensor_size = 1;
  EXPECT_EQ(JobSimulator(options).weight_shape(), (Shape{1, 1}));
}

TEST(JobSimulatorTest, HealthyJobLooksLikeTraining) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.tensor_size = 4096;
  const Trial trial = simulate_and_open(options);

  float previous_loss = std::numeric_limits<float>::infinity();
  for (std::int64_t step = 0; step < 20; ++step) {
    const float loss = loss_at(trial, step);
    EXPECT_LT(loss, previous_loss) << "step " << step;
    EXPECT_GT(loss, 0.0f);
    previous_loss = loss;
    for (const auto& name : gradient_names(trial)) {
      const double mean = abs_mean(trial.tensor(name).value(step));
      EXPECT_GT(mean, 5e-3) << name << " step " << step;
      EXPECT_LT(mean, 2e-2) << name << " step " << step;
    }
    const auto output = floats(trial.tensor("relu2_output_0").value(step));
    const auto zeros = std::count(output.begin(), output.end(), 0.0f);
    EXPECT_NEAR(static_cast<double>(zeros) / static_cast<double>(output.size()), 0.5, 0.05);
  }
  // The first and last losses follow the documented curve 2.3 * exp(-5 t / steps).
  EXPECT_NEAR(loss_at(trial, 0), 2.3, 2.3 * 0.07);
  EXPECT_NEAR(loss_at(trial, 19), 2.3 * std::exp(-5.0 * 19 / 20), 0.01);

  // Every element of every weight and bias changes at every step.
  for (const auto& name : trial.tensor_names({.step = std::nullopt,
                          .mode = Mode::Global,
                          .regex = {"^MLP_"},
                          .collection = std::nullopt})) {
    for (std::int64_t step = 1; step < 20; ++step) {
      const auto before = floats(trial.tensor(name).value(step - 1));
      const auto after = floats(trial.tensor(name).value(step));
      for (std::size_t i = 0; i < before.size(); ++i) {
        ASSERT_NE(before[i], after[i]) << name << "[" << i << "] at step " << step;
      }
    }
  }
}

TEST(JobSimulatorTest, HealthyLossDecreasesEnoughForLossNotDecreasing) {
  // LossNotDecreasing's defaults: 0.1% over 10 steps.
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.steps = 400;
  options.tensor_size = 4;
  const Trial trial = simulate_and_open(options);
  for (std::int64_t step = 10; step < 400; ++step) {
    EXPECT_LT(loss_at(trial, step), loss_at(trial, step - 10) * (1 - 0.001)) << step;
  }
}

TEST(JobSimulatorTest, VanishingGradientsFromTheFaultStep) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::VanishingGradients);
  options.extra_tensors = 4;
  const Trial trial = simulate_and_open(options);
  const auto names = gradient_names(trial);
  ASSERT_EQ(names.size(), 8u);  // six fc gradients and two extra ones
  for (const auto& name : names) {
    const Tensor tensor = trial.tensor(name);
    for (std::int64_t step = 0; step < 20; ++step) {
      const double mean = abs_mean(tensor.value(step));
      const double saved =
          tensor.reduction_value(step, Reduction::Mean, Mode::Global, std::nullopt, true)
              .as_double();
      if (step < 10) {
        EXPECT_GT(mean, 1e-4) << name << " step " << step;
      } else {
        EXPECT_LT(mean, 1e-7) << name << " step " << step;
        EXPECT_LT(saved, 1e-9) << name << " step " << step;
        EXPECT_GT(saved, 0.0) << name << " step " << step;
      }
    }
  }
  // Nothing else changes: the loss keeps decreasing through the fault.
  EXPECT_LT(loss_at(trial, 12), loss_at(trial, 9));
}

TEST(JobSimulatorTest, ExplodingLossAndGradients) {
  TempDir dir;
  const auto options = small_job(dir.path() / "job", JobScenario::Exploding);
  const Trial trial = simulate_and_open(options);
  for (std::int64_t step = 0; step < 10; ++step) {
    EXPECT_TRUE(std::isfinite(loss_at(trial, step))) << step;
    EXPECT_LT(loss_at(trial, step), 3.0f) << step;
  }
  EXPECT_TRUE(std::isfinite(loss_at(trial, 10)));
  EXPECT_GT(loss_at(trial, 10), 1e3f);
  EXPECT_EQ(loss_at(trial, 11), std::numeric_limits<float>::infinity());
  for (std::int64_t step = 12; step < 20; ++step) EXPECT_TRUE(std::isnan(loss_at(trial, step)));

  const Tensor gradient = trial.tensor("gradient/MLP_fc2.weight");
  for (std::int64_t step = 0; step < 10; ++step) {
    for (const float x : floats(gradient.value(step))) ASSERT_TRUE(std::isfinite(x)) << step;
  }
  EXPECT_GT(abs_mean(gradient.value(10)), 10.0);
  for (const float x : floats(gradient.value(11))) EXPECT_TRUE(std::isinf(x));
  for (const float x : floats(gradient.value(12))) EXPECT_TRUE(std::isnan(x));

  // Weights and activations blow up once the infinite update has been applied.
  for (const char* name : {"MLP_fc1.weight", "relu1_output_0"}) {
    for (const float x : floats(trial.tensor(name).value(11))) ASSERT_TRUE(std::isfinite(x));
    for (const float x : floats(trial.tensor(name).value(12))) ASSERT_TRUE(std::isnan(x));
  }
}

TEST(JobSimulatorTest, DeadReluOutputsZerosForTheFirstLayer) {
  TempDir dir;
  const auto options = small_job(dir.path() / "job", JobScenario::DeadRelu);
  const Trial trial = simulate_and_open(options);
  const auto all_zero = [](const TensorValue& value) {
    const auto v = floats(value);
    return std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; });
  };
  for (std::int64_t step = 0; step < 20; ++step) {
    const bool dead = step >= 10;
    EXPECT_EQ(all_zero(trial.tensor("relu1_output_0").value(step)), dead) << step;
    EXPECT_FALSE(all_zero(trial.tensor("relu2_output_0").value(step))) << step;
    const auto input = floats(trial.tensor("relu1_input_0").value(step));
    EXPECT_EQ(std::all_of(input.begin(), input.end(), [](float x) { return x < 0.0f; }), dead);
  }
}

TEST(JobSimulatorTest, LossPlateauIsBitIdentical) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::LossPlateau);
  options.workers = 2;
  const Trial trial = simulate_and_open(options);
  const Tensor loss = trial.tensor("CrossEntropyLoss_output_0");
  const TensorValue plateau = loss.value(10, Mode::Global, "worker_0");
  for (std::int64_t step = 10; step < 20; ++step) {
    for (const char* worker : {"worker_0", "worker_1"}) {
      EXPECT_TRUE(loss.value(step, Mode::Global, worker).identical_to(plateau))
          << step << " " << worker;
    }
  }
  for (std::int64_t step = 1; step < 10; ++step) {
    EXPECT_LT(loss_at(trial, step), loss_at(trial, step - 1));
  }
  EXPECT_FALSE(loss.value(9).identical_to(plateau));
}

TEST(JobSimulatorTest, OverfitEvalLossRisesWhileTrainLossFalls) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Overfit);
  options.steps = 40;
  options.eval_every = 5;
  options.eval_steps = 2;
  options.fault_step = 20;
  const JobSimulator simulator(options);
  ASSERT_EQ(simulator.global_step_count(), 56);
  const Trial trial = simulate_and_open(options);

  const auto train = trial.steps(Mode::Train);
  ASSERT_EQ(train.size(), 40u);
  for (std::size_t i = 1; i < train.size(); ++i) {
    EXPECT_LT(loss_at(trial, train[i], Mode::Train), loss_at(trial, train[i - 1], Mode::Train));
  }
  std::vector<float> eval_after;
  float last_eval_before = 0;
  for (const std::int64_t mode_step : trial.steps(Mode::Eval)) {
    const float loss = loss_at(trial, mode_step, Mode::Eval);
    if (*trial.global_step(Mode::Eval, mode_step) >= 20) {
      eval_after.push_back(loss);
    } else {
      last_eval_before = loss;
    }
  }
  ASSERT_GE(eval_after.size(), 2u);
  EXPECT_GT(eval_after.front(), last_eval_before);
  for (std::size_t i = 1; i < eval_after.size(); ++i) EXPECT_GT(eval_after[i], eval_after[i - 1]);
}

TEST(JobSimulatorTest, FrozenWeightsStopChangingAndGradientsAreZero) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::FrozenWeights);
  options.extra_tensors = 2;
  const Trial trial = simulate_and_open(options);
  for (const char* name : {"MLP_fc1.weight", "MLP_fc3.bias", "MLP_layer0.weight"}) {
    const Tensor tensor = trial.tensor(name);
    const TensorValue frozen = tensor.value(9);
    for (std::int64_t step = 10; step < 20; ++step) {
      EXPECT_TRUE(tensor.value(step).identical_to(frozen)) << name << " step " << step;
    }
    EXPECT_FALSE(tensor.value(8).identical_to(frozen)) << name;
  }
  for (const auto& name : gradient_names(trial)) {
    for (std::int64_t step = 0; step < 20; ++step) {
      const auto v = floats(trial.tensor(name).value(step));
      const bool zero = std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; });
      EXPECT_EQ(zero, step >= 10) << name << " step " << step;
    }
  }
}

TEST(JobSimulatorTest, FaultAtStepZeroFreezesTheInitialWeights) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::FrozenWeights);
  options.steps = 4;
  options.fault_step = 0;
  const Trial trial = simulate_and_open(options);
  const Tensor weight = trial.tensor("MLP_fc1.weight");
  for (std::int64_t step = 1; step < 4; ++step) {
    EXPECT_TRUE(weight.value(step).identical_to(weight.value(0)));
  }
}

TEST(JobSimulatorTest, EveryWorkerWritesItsOwnFiles) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.workers = 3;
  options.steps = 4;
  const auto summary = JobSimulator(options).run();
  EXPECT_EQ(summary.records, 3u * 4u * 17u);
  for (const char* worker : {"worker_0", "worker_1", "worker_2"}) {
    EXPECT_TRUE(std::filesystem::exists(options.output / "collections" / "000000000" /
                                        (std::string(worker) + "_collections.json")));
    EXPECT_TRUE(std::filesystem::exists(options.output / "events" / "000000000003" /
                                        ("000000000003_" + std::string(worker) + ".tfevents")));
    EXPECT_TRUE(std::filesystem::exists(options.output / "index" / "000000000" /
                                        ("000000000003_" + std::string(worker) + ".json")));
  }
  const Trial trial = Trial::open(options.output.string());
  EXPECT_EQ(trial.workers(), (std::vector<std::string>{"worker_0", "worker_1", "worker_2"}));
  EXPECT_EQ(trial.num_workers(), 3);
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0, 1, 2, 3}));
  // Replicas share parameters; each worker has its own batch, so its own gradients and loss.
  const Tensor weight = trial.tensor("MLP_fc1.weight");
  const Tensor gradient = trial.tensor("gradient/MLP_fc1.weight");
  EXPECT_EQ(weight.workers(2).size(), 3u);
  EXPECT_TRUE(weight.value(2, Mode::Global, "worker_0")
                  .identical_to(weight.value(2, Mode::Global, "worker_2")));
  EXPECT_FALSE(gradient.value(2, Mode::Global, "worker_0")
                   .identical_to(gradient.value(2, Mode::Global, "worker_1")));
  EXPECT_NE(loss_at(trial, 2, Mode::Global, "worker_0"),
            loss_at(trial, 2, Mode::Global, "worker_1"));
}

TEST(JobSimulatorTest, EvalStepsInterleaveWithTheirOwnModeSteps) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.steps = 6;
  options.eval_every = 2;
  options.eval_steps = 2;
  const JobSimulator simulator(options);
  ASSERT_EQ(simulator.global_step_count(), 12);
  EXPECT_EQ(simulator.step(2), (SimulatedStep{2, Mode::Eval, 0, 2, true}));
  EXPECT_EQ(simulator.step(4), (SimulatedStep{4, Mode::Train, 2, 2, true}));
  EXPECT_EQ(simulator.step(11), (SimulatedStep{11, Mode::Eval, 5, 6, true}));
  EXPECT_THROW(simulator.step(12), std::out_of_range);

  const Trial trial = simulate_and_open(options);
  const std::vector<Mode> expected_modes{Mode::Train, Mode::Train, Mode::Eval, Mode::Eval};
  for (std::int64_t global = 0; global < 12; ++global) {
    EXPECT_EQ(trial.mode(global), expected_modes[static_cast<std::size_t>(global % 4)]) << global;
    EXPECT_EQ(trial.mode_step(global), (global / 4) * 2 + global % 2) << global;
  }
  EXPECT_EQ(trial.steps(Mode::Train), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(trial.steps(Mode::Eval), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(trial.global_step(Mode::Eval, 3), 7);
  // EVAL steps never save gradients; they do save weights, which do not move during EVAL.
  const Tensor gradient = trial.tensor("gradient/MLP_fc1.weight");
  EXPECT_EQ(gradient.steps(), (std::vector<std::int64_t>{0, 1, 4, 5, 8, 9}));
  EXPECT_THROW(gradient.value(2), TensorUnavailableForStep);
  const Tensor weight = trial.tensor("MLP_fc1.weight");
  EXPECT_TRUE(weight.value(2).identical_to(weight.value(3)));
  EXPECT_TRUE(weight.value(3).identical_to(weight.value(4)));
  EXPECT_FALSE(weight.value(1).identical_to(weight.value(2)));
}

TEST(JobSimulatorTest, SaveIntervalAppliesToModeSteps) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.steps = 10;
  options.save_interval = 3;
  options.eval_every = 5;
  options.eval_steps = 4;
  const auto summary = JobSimulator(options).run();
  EXPECT_EQ(summary.global_steps, 18);
  EXPECT_EQ(summary.saved_steps, 4 + 3);  // TRAIN 0,3,6,9; EVAL 0,3,6
  const Trial trial = Trial::open(options.output.string());
  EXPECT_EQ(trial.steps(Mode::Train), (std::vector<std::int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(trial.steps(Mode::Eval), (std::vector<std::int64_t>{0, 3, 6}));
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0, 3, 5, 8, 10, 13, 16}));
  EXPECT_EQ(trial.collection("gradients").save_config.at(Mode::Eval)->save_interval, 3);
}

TEST(JobSimulatorTest, ReductionsOnlySavesReductionsAndShapes) {
  TempDir dir;
  auto options = small_job(dir.path() / "reduced", JobScenario::Healthy);
  options.steps = 3;
  options.tensor_size = 640;
  options.reductions_only = true;
  options.seed = 7;
  const Trial reduced = simulate_and_open(options);
  options.output = dir.path() / "raw";
  options.reductions_only = false;
  const Trial raw = simulate_and_open(options);

  const auto weights = reduced.collection("weights");
  EXPECT_FALSE(weights.reduction_config.save_raw_tensor);
  EXPECT_TRUE(weights.reduction_config.save_shape);
  EXPECT_EQ(weights.reduction_config.reductions.size(), 6u);
  EXPECT_EQ(reduced.collection("gradients").reduction_config.reductions.size(), 12u);
  EXPECT_TRUE(reduced.collection("biases").reduction_config.save_raw_tensor);

  for (const char* name : {"MLP_fc1.weight", "gradient/MLP_fc2.bias"}) {
    const Tensor tensor = reduced.tensor(name);
    EXPECT_THROW(tensor.value(1), TensorUnavailableForStep) << name;
    const TensorValue value = raw.tensor(name).value(1);
    EXPECT_EQ(tensor.shape(1), value.shape()) << name;
    const auto n = static_cast<double>(value.size());
    double sum = 0, squares = 0, l1 = 0;
    for (const float x : floats(value)) {
      sum += x;
      squares += static_cast<double>(x) * x;
      l1 += std::fabs(x);
    }
    const double mean = sum / n;
    const auto saved = [&](Reduction reduction, bool abs = false) {
      return tensor.reduction_value(1, reduction, Mode::Global, std::nullopt, abs).as_double();
    };
    EXPECT_NEAR(saved(Reduction::Mean), mean, 1e-6) << name;
    EXPECT_NEAR(saved(Reduction::Mean, true), l1 / n, 1e-6) << name;
    EXPECT_NEAR(saved(Reduction::L2), std::sqrt(squares), 1e-4) << name;
    if (std::string(name).starts_with("gradient/")) {
      // The PyTorch hook's unbiased variance (ddof = 1).
      const double variance = (squares - n * mean * mean) / (n - 1);
      EXPECT_NEAR(saved(Reduction::Variance), variance, variance * 1e-4) << name;
      EXPECT_NEAR(saved(Reduction::Std), std::sqrt(variance), std::sqrt(variance) * 1e-4);
      EXPECT_EQ(tensor.saved_reductions(1).size(), 12u);
    } else {
      EXPECT_EQ(tensor.saved_reductions(1).size(), 6u);
      // Not saved, and no raw value to compute it from.
      EXPECT_THROW(saved(Reduction::Variance), TensorUnavailableForStep) << name;
    }
  }
  // Biases, activations and the loss stay raw.
  EXPECT_TRUE(
      reduced.tensor("MLP_fc1.bias").value(1).identical_to(raw.tensor("MLP_fc1.bias").value(1)));
  EXPECT_TRUE(reduced.tensor("relu1_output_0")
                  .value(2)
                  .identical_to(raw.tensor("relu1_output_0").value(2)));
}

TEST(JobSimulatorTest, SameSeedSameJob) {
  TempDir dir;
  auto options = small_job(dir.path() / "a", JobScenario::Exploding);
  options.workers = 2;
  options.steps = 6;
  options.fault_step = 3;
  options.seed = 42;
  const Trial first = simulate_and_open(options);
  options.output = dir.path() / "b";
  const Trial second = simulate_and_open(options);
  options.output = dir.path() / "c";
  options.seed = 43;
  const Trial other = simulate_and_open(options);

  for (const auto& name : first.tensor_names()) {
    for (const auto step : first.tensor(name).steps()) {
      for (const char* worker : {"worker_0", "worker_1"}) {
        EXPECT_TRUE(first.tensor(name)
                        .value(step, Mode::Global, worker)
                        .identical_to(second.tensor(name).value(step, Mode::Global, worker)))
            << name << " step " << step << " " << worker;
      }
    }
  }
  // Index files hold no wall time: byte-identical.
  const auto index = std::filesystem::path("index") / "000000000" / "000000000004_worker_1.json";
  EXPECT_EQ(testing::read_text_file(dir.path() / "a" / index),
            testing::read_text_file(dir.path() / "b" / index));
  EXPECT_FALSE(first.tensor("MLP_fc1.weight")
                   .value(0)
                   .identical_to(other.tensor("MLP_fc1.weight").value(0)));
  EXPECT_NE(loss_at(first, 1), loss_at(other, 1));
}

TEST(JobSimulatorTest, ExtraTensorsAlternateWeightsAndGradients) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.steps = 2;
  options.extra_tensors = 5;
  options.extra_tensor_size = 3;
  options.model_name = "Net";
  const JobSimulator simulator(options);
  const auto names = simulator.tensor_names();
  EXPECT_EQ(names.size(), 17u + 5u);
  for (const char* name :
       {"Net_layer0.weight", "Net_layer1.weight", "Net_layer2.weight", "gradient/Net_layer0.weight",
        "gradient/Net_layer1.weight", "Net_fc1.weight"}) {
    EXPECT_TRUE(std::find(names.begin(), names.end(), name) != names.end()) << name;
  }
  EXPECT_TRUE(std::find(names.begin(), names.end(), "gradient/Net_layer2.weight") == names.end());
  simulator.run();
  const Trial trial = Trial::open(options.output.string());
  EXPECT_EQ(trial.tensor("Net_layer2.weight").value(1).shape(), Shape{3});
  EXPECT_TRUE(trial.collection("weights").tensor_names.contains("Net_layer1.weight"));
  EXPECT_TRUE(trial.collection("gradients").tensor_names.contains("gradient/Net_layer1.weight"));
}

TEST(JobSimulatorTest, EndMarkerIsOptional) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.steps = 2;
  options.write_end_marker = false;
  JobSimulator(options).run();
  EXPECT_FALSE(std::filesystem::exists(options.output / "training_job_end.ts"));
  EXPECT_FALSE(Trial::open(options.output.string()).has_training_ended());
}

TEST(JobSimulatorTest, CallbackSeesEachSavedStepOnceEveryWorkerWroteIt) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.steps = 6;
  options.save_interval = 2;
  options.workers = 2;
  options.step_delay = std::chrono::milliseconds(1);
  std::vector<std::int64_t> seen;
  options.on_step_written = [&](const SimulatedStep& step) {
    seen.push_back(step.global_step);
    EXPECT_TRUE(step.saved);
    const Trial live = Trial::open(options.output.string());
    EXPECT_FALSE(live.has_training_ended());
    EXPECT_EQ(live.num_workers(), 2);
    EXPECT_EQ(live.steps().back(), step.global_step);
  };
  JobSimulator(options).run();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 2, 4}));
}

TEST(JobSimulatorTest, CallbackExceptionStopsTheJob) {
  TempDir dir;
  auto options = small_job(dir.path() / "job", JobScenario::Healthy);
  options.on_step_written = [](const SimulatedStep& step) {
    if (step.global_step == 2) throw std::runtime_error("stop here");
  };
  EXPECT_THROW(JobSimulator(options).run(), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(options.output / "events" / "000000000003"));
  EXPECT_FALSE(std::filesystem::exists(options.output / "training_job_end.ts"));
}

TEST(JobSimulatorTest, CompressedEventFilesReadBack) {
  TempDir dir;
  for (const Compression compression : {Compression::Zlib, Compression::Gzip}) {
    auto options = small_job(dir.path() / (compression == Compression::Zlib ? "zlib" : "gzip"),
                             JobScenario::Healthy);
    options.steps = 2;
    options.compression = compression;
    JobSimulator(options).run();
    options.output = dir.path() / "plain";
    options.compression = Compression::None;
    options.overwrite = true;
    JobSimulator(options).run();
    const Trial compressed =
        Trial::open((dir.path() / (compression == Compression::Zlib ? "zlib" : "gzip")).string());
    const Trial plain = Trial::open(options.output.string());
    EXPECT_TRUE(compressed.tensor("MLP_fc2.weight")
                    .value(1)
                    .identical_to(plain.tensor("MLP_fc2.weight").value(1)));
  }
}

TEST(JobSimulatorTest, RejectsBadOptions) {
  TempDir dir;
  const auto base = small_job(dir.path() / "job", JobScenario::Healthy);
  const auto rejects = [&](auto change, const std::string& fragment) {
    auto options = base;
    change(options);
    try {
      JobSimulator simulator(options);
      simulator.run();
      ADD_FAILURE() << "accepted; expected an error mentioning '" << fragment << "'";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  rejects([](auto& o) { o.workers = 0; }, "workers");
  rejects([](auto& o) { o.steps = 0; }, "steps");
  rejects([](auto& o) { o.layers = 1; }, "layers");
  rejects([](auto& o) { o.tensor_size = 0; }, "tensor_size");
  rejects([](auto& o) { o.save_interval = 0; }, "save_interval");
  rejects([](auto& o) { o.extra_tensors = -1; }, "extra_tensors");
  rejects([](auto& o) { o.eval_every = 2, o.eval_steps = 0; }, "eval_steps");
  rejects([](auto& o) { o.fault_step = 20; },
          "fault step 20 is outside the job's global steps 0..19");
  rejects([](auto& o) { o.fault_step = -1; }, "fault step -1");
  rejects([](auto& o) { o.scenario = JobScenario::Overfit; }, "overfit");
  rejects([](auto& o) { o.output.clear(); }, "output");
  rejects([](auto& o) { o.model_name = "a/b"; }, "model_name");
  rejects([](auto& o) { o.step_delay = std::chrono::milliseconds(-1); }, "step_delay");
  rejects(
      [](auto& o) {
        o.steps = std::int64_t{1} << 40, o.eval_every = 1, o.eval_steps = std::int64_t{1} << 40;
      },
      "global steps");

  // Overfit with too few saved EVAL steps after the fault.
  rejects(
      [](auto& o) {
        o.scenario = JobScenario::Overfit, o.eval_every = 10, o.eval_steps = 1, o.fault_step = 12;
      },
      "two saved EVAL steps");

  testing::write_text_file(base.output / "something", "x");
  rejects([](auto&) {}, "not empty");
  auto overwrite = base;
  overwrite.overwrite = true;
  overwrite.steps = 2;
  overwrite.fault_step = 1;
  EXPECT_NO_THROW(JobSimulator(overwrite).run());
  EXPECT_TRUE(std::filesystem::exists(base.output / "something"));

  testing::write_text_file(dir.path() / "file", "x");
  rejects([&](auto& o) { o.output = dir.path() / "file"; }, "not a folder");
}

}  // namespace
}  // namespace rulestream
