#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/compression.hpp"
#include "core/model/mode.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream {

// What goes wrong in a simulated training job, and from which global step (the fault step F).
// Each scenario changes only what its entry lists; everything else behaves as in Healthy.
enum class JobScenario {
  // Loss: TRAIN loss strictly decreases from one TRAIN step to the next:
  //   2.3 * exp(-k * t) * (1 + a * u), k = 5 / steps, a = tanh(k / 2) / 4, u in [-1, 1)
  //   (t = TRAIN mode step, u per worker and step), so it falls to 2.3 * e^-5 by the last step
  //   and by more than 0.1% over any 10 TRAIN steps while steps <= 40,000. EVAL loss is
  //   1.1 * 2.3 * exp(-k * p) * (1 + a * u), p = TRAIN steps done before the EVAL step.
  // Weights and biases: N(0, 0.1) and N(0, 0.05) times (1 + 1e-3 * p), p = TRAIN steps done,
  //   the same on every worker (replicas); every element changes at every TRAIN step and stays
  //   put across the EVAL steps between two TRAIN steps.
  // Gradients (TRAIN steps only): N(0, 0.0125) per worker and step, abs-mean ~1e-2.
  // ReLU inputs N(0, 1) per worker and step, never exactly 0; outputs max(0, x): ~50% zeros.
  Healthy,
  // From F, every gradient tensor (biases and extra tensors included) is N(0, 1.25e-10):
  // abs-mean ~1e-10, far below VanishingGradient's default threshold 1e-7.
  VanishingGradients,
  // Loss (TRAIN and EVAL): at F the healthy value times 1e4 (finite), at F+1 +Inf, from F+2 NaN.
  // Gradients: at F the healthy values times 1e4, at F+1 every element +-Inf, from F+2 all NaN.
  // Weights, biases and ReLU inputs/outputs: all NaN from F+2.
  Exploding,
  // From F, relu1_input_0 is all negative (-|x|) so relu1_output_0 is all zeros (+0.0);
  // the other ReLU layers stay healthy.
  DeadRelu,
  // From F, the TRAIN loss is the bit-identical constant float(2.3 * exp(-k * p(F))) on every
  // worker, and the EVAL loss the constant float(1.1 * 2.3 * exp(-k * p(F))).
  LossPlateau,
  // TRAIN loss stays healthy; from F the EVAL loss is 1.1 * 2.3 * exp(-k * p(F)) * (1 + 0.1 *
  // (j + 1)) at the j-th EVAL step since F: strictly increasing. Needs EVAL steps (eval_every)
  // with at least two of them saved from F on.
  Overfit,
  // From F, weights and biases are bit-identical to their values at step F-1 (at step 0 when F
  // is 0) and every gradient element is exactly +0.0.
  FrozenWeights,
};

inline constexpr JobScenario kAllJobScenarios[] = {
    JobScenario::Healthy,      JobScenario::VanishingGradients, JobScenario::Exploding,
    JobScenario::DeadRelu,     JobScenario::LossPlateau,        JobScenario::Overfit,
    JobScenario::FrozenWeights};

// "healthy", "vanishing_gradients", "exploding", "dead_relu", "loss_plateau", "overfit",
// "frozen_weights".
std::string_view job_scenario_name(JobScenario scenario);
std::optional<JobScenario> job_scenario_from_name(std::string_view name);

// A global step of the simulated job.
struct SimulatedStep {
  std::int64_t global_step = 0;
  Mode mode = Mode::Train;
  std::int64_t mode_step = 0;
  // TRAIN steps completed before this step: what the weights have seen so far.
  std::int64_t train_progress = 0;
  bool saved = false;  // mode_step % save_interval == 0

  friend bool operator==(const SimulatedStep&, const SimulatedStep&) = default;
};

// Everything a simulated job can vary; the defaults make a small healthy single-worker job.
//
// The model mimics smdebug's PyTorch hook on an MLP fc1..fcN with ReLUs between layers:
//   <model>_fcK.weight [rows, cols] and <model>_fcK.bias [rows], their gradients
//   gradient/<model>_fcK.weight|bias, reluK_input_0 / reluK_output_0 [cols, rows] for
//   K < layers, and CrossEntropyLoss_output_0 (0-d); rows * cols = tensor_size, cols the
//   largest divisor of tensor_size not above its square root. Extra tensors alternate
//   <model>_layer<i>.weight and gradient/<model>_layer<i>.weight, [extra_tensor_size] each, and
//   follow the scenario as the fc weights and gradients do. Everything is float32.
// Collections: weights, biases, gradients, losses, relu_activations, all, default, with
// _meta.num_workers, written by every worker after its first saved step.
struct JobSimulatorOptions {
  std::filesystem::path output;
  JobScenario scenario = JobScenario::Healthy;
  int workers = 1;  // worker_0 .. worker_{n-1}, each writing its own files

  // The job runs `steps` TRAIN steps; after every `eval_every` of them (0: never) it runs
  // `eval_steps` EVAL steps. Global steps count across modes; mode steps count per mode.
  std::int64_t steps = 100;
  std::int64_t eval_every = 0;
  std::int64_t eval_steps = 2;
  // A step is saved when its mode step is a multiple of this (smdebug's SaveConfig), for every
  // collection; EVAL steps never save gradients.
  std::int64_t save_interval = 1;

  int layers = 3;                  // fc layers (>= 2, so there is at least one ReLU)
  std::int64_t tensor_size = 256;  // elements of each weight, weight gradient and activation
  std::int64_t extra_tensors = 0;  // many small tensors for the small-tensor benchmarks
  std::int64_t extra_tensor_size = 16;
  std::string model_name = "MLP";

  // The global step where the scenario's fault starts; nullopt: the middle of the job.
  std::optional<std::int64_t> fault_step;
  // Save weights and gradients only as reductions plus their shapes (like pt-mlp-reductions):
  // weights min, max, mean, l2, abs_mean, abs_l1; gradients mean, std, variance, sum, prod, min,
  // max, l1, l2, abs_mean, abs_max, abs_min. std/variance are unbiased (ddof = 1) and l1/l2 are
  // vector norms, as the PyTorch hook computes them.
  bool reductions_only = false;

  // Values depend only on the seed (and the options above), never on the thread schedule or the
  // standard library's distributions. Wall times in the records are the real clock.
  std::uint64_t seed = 0;
  bool write_end_marker = true;
  Compression compression = Compression::None;
  bool atomic_rename = true;  // false: files are written in place (see TrialWriter)
  // Write into an output folder that already holds files (files of the same name are replaced,
  // others kept). Off: a non-empty output folder is an error.
  bool overwrite = false;

  // Called on the thread that runs the simulation once every worker has written a saved step,
  // then the simulation sleeps `step_delay` before the next one: lets a test or a demo follow a
  // job being written. An exception from the callback stops the simulation and propagates.
  std::function<void(const SimulatedStep&)> on_step_written;
  std::chrono::milliseconds step_delay{0};
};

// What a simulation wrote.
struct SimulationSummary {
  std::int64_t global_steps = 0;  // steps the job ran, TRAIN and EVAL
  std::int64_t train_steps = 0;
  std::int64_t eval_steps = 0;
  std::int64_t saved_steps = 0;   // global steps that wrote files (on every worker)
  std::int64_t fault_step = 0;    // the resolved fault step (meaningless for Healthy)
  std::size_t tensor_count = 0;   // distinct tensor names the job saves
  std::uint64_t records = 0;      // TFRecords written, all workers (raw tensors and reductions)
  std::uint64_t event_bytes = 0;  // bytes of event files, all workers (as stored on disk)
};

// Writes a synthetic training job in smdebug's format. Workers are written in parallel (one
// TrialWriter each), step by step, so that a reader following the folder sees the steps land
// in order.
class JobSimulator {
 public:
  // Checks the options; throws std::invalid_argument naming the option at fault (workers < 1,
  // fault_step outside the job, overfit without saved EVAL steps after the fault, ...).
  explicit JobSimulator(JobSimulatorOptions options);

  const JobSimulatorOptions& options() const { return options_; }
  std::int64_t fault_step() const { return fault_step_; }
  std::int64_t global_step_count() const;
  // The global step's mode, mode step and whether it is saved. Requires 0 <= step < count.
  SimulatedStep step(std::int64_t global_step) const;
  // Every tensor name the job saves, sorted.
  std::vector<std::string> tensor_names() const;
  // The shape of a weight / activation tensor: [rows, cols], rows * cols = tensor_size.
  Shape weight_shape() const;

  // Writes the job. Throws std::invalid_argument when the output folder is a file or is not
  // empty (without overwrite), StorageError when a file cannot be written, and whatever
  // on_step_written throws.
  SimulationSummary run() const;

 private:
  JobSimulatorOptions options_;
  std::int64_t fault_step_ = 0;
};

}  // namespace rulestream
