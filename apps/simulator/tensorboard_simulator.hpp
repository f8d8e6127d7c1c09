#pragma once

// A synthetic training job written as a TensorBoard logdir, healthy or with a fault that a
// person looking at its curves would call out from `fault_step` on: for the demo, the tests and
// the benchmarks. Each run writes, at every step t of 0 .. steps-1 (PyTorch's SummaryWriter
// layout, HF Trainer's tag names):
//   train/loss          2.3 exp(-k t) (1 + a u),  k = 5 / steps,  a = tanh(5 k) / 4,
//                        u uniform in [-1, 1) per run, tag and step: the loss falls by more
//                        than 0.1% over any 10 steps and never jumps (LossNotDecreasing and
//                        LossSpike stay quiet on it);
//   eval/loss           every `eval_every`-th step (10): 1.1 times the same curve (its own u);
//   train/grad_norm     1 + 0.2 u;
//   train/learning_rate 1e-3;
//   metrics/extra_<i>   `extra_tags` more series, 0.5 + 0.1 u (for benchmarks).
// Faults, from fault_step F on:
//   exploding     train/loss and train/grad_norm grow by a constant factor a step to 1e10 over
//                 D = max(10, steps / 20) steps, then are NaN;
//   loss_plateau  train/loss stays at its value at F, eval/loss at 1.05 times that (each
//                 times 1 + 1e-5 u): a model that stopped learning, no more overfit than
//                 before (the healthy ratio of validation to recent training loss is ~1.076);
//   overfit       eval/loss rises: its value at F times 1 + (t - F) / (steps - F), while
//                 train/loss keeps falling;
//   restart       the run resumes from a checkpoint at F / 2: a second event file rewrites the
//                 steps from F / 2 on with the same healthy curves (TensorBoard keeps the
//                 second file's values).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace rulestream {

enum class TensorBoardScenario { Healthy, Exploding, LossPlateau, Overfit, Restart };

inline constexpr TensorBoardScenario kAllTensorBoardScenarios[] = {
    TensorBoardScenario::Healthy, TensorBoardScenario::Exploding, TensorBoardScenario::LossPlateau,
    TensorBoardScenario::Overfit, TensorBoardScenario::Restart};

std::string_view tensorboard_scenario_name(TensorBoardScenario scenario);
std::optional<TensorBoardScenario> tensorboard_scenario_from_name(std::string_view name);

struct TensorBoardSimulatorOptions {
  std::filesystem::path output;
  TensorBoardScenario scenario = TensorBoardScenario::Healthy;
  int runs = 1;  // 1: the logdir itself is the run; more: run_0, run_1, ...
  std::int64_t steps = 1000;
  std::optional<std::int64_t> fault_step;  // default: 60% of the steps
  std::int64_t extra_tags = 0;
  std::int64_t eval_every = 10;
  bool tensor_scalars = false;  // TF2's scalar tensors instead of simple_value
  std::uint64_t seed = 0;
  // Sleep this long after each step, for a watcher to follow the files as they grow.
  std::chrono::milliseconds step_delay{0};
};

struct TensorBoardSimulation {
  std::int64_t values = 0;
  std::uint64_t bytes = 0;
  std::int64_t fault_step = -1;  // -1 for a healthy job
};

// Writes the logdir. std::invalid_argument naming the option for one out of range; StorageError
// naming the file for one that cannot be written.
TensorBoardSimulation simulate_tensorboard(const TensorBoardSimulatorOptions& options);

}  // namespace rulestream
