#include "apps/simulator/tensorboard_simulator.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "stages/format/tensorboard_writer.hpp"

namespace rulestream {
namespace {

constexpr std::array<std::pair<TensorBoardScenario, std::string_view>, 5> kNames{{
    {TensorBoardScenario::Healthy, "healthy"},
    {TensorBoardScenario::Exploding, "exploding"},
    {TensorBoardScenario::LossPlateau, "loss_plateau"},
    {TensorBoardScenario::Overfit, "overfit"},
    {TensorBoardScenario::Restart, "restart"},
}};

// u in [-1, 1), a pure function of (seed, run, tag, step): the same job every time, and a run
// restarted from a checkpoint writes the values it wrote before.
double noise(std::uint64_t seed, int run, int tag, std::int64_t step) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(run) << 48) ^
                    (static_cast<std::uint64_t>(tag) << 40) ^ static_cast<std::uint64_t>(step);
  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(std::uint64_t{1} << 52) - 1.0;
}

class RunWriter {
 public:
  RunWriter(const TensorBoardSimulatorOptions& options, int run, std::int64_t fault)
      : options_(options), run_(run), fault_(fault) {
    const double steps = static_cast<double>(options.steps);
    k_ = 5.0 / steps;
    a_ = std::tanh(5.0 * k_) / 4.0;
    blowup_steps_ = std::max<std::int64_t>(10, options.steps / 20);
  }

  // Every value of steps [from, to) into `writer`.
  std::int64_t write(TensorBoardWriter& writer, std::int64_t from, std::int64_t to) const {
    std::int64_t values = 0;
    for (std::int64_t t = from; t < to; ++t) {
      const double wall_time = 1.7e9 + static_cast<double>(t);
      const auto put = [&](const std::string& tag, double value) {
        writer.add_scalar(tag, t, static_cast<float>(value), wall_time);
        ++values;
      };
      put("train/loss", train_loss(t));
      if (t % options_.eval_every == 0) put("eval/loss", eval_loss(t));
      put("train/grad_norm", grad_norm(t));
      put("train/learning_rate", 1e-3);
      for (std::int64_t i = 0; i < options_.extra_tags; ++i) {
        put("metrics/extra_" + std::to_string(i), 0.5 + 0.1 * u(10 + static_cast<int>(i), t));
      }
      if (options_.step_delay.count() > 0) std::this_thread::sleep_for(options_.step_delay);
    }
    return values;
  }

 private:
  double u(int tag, std::int64_t step) const { return noise(options_.seed, run_, tag, step); }
  double curve(std::int64_t t) const { return 2.3 * std::exp(-k_ * static_cast<double>(t)); }
  bool faulty(TensorBoardScenario scenario, std::int64_t t) const {
    return options_.scenario == scenario && t >= fault_;
  }
  // The factor an exploding series has grown by at step t (>= fault), or NaN past 1e10.
  double blowup(double at_fault, std::int64_t t) const {
    if (t > fault_ + blowup_steps_) return std::numeric_limits<double>::quiet_NaN();
    const double per_step = std::log(1e10 / at_fault) / static_cast<double>(blowup_steps_);
    return at_fault * std::exp(per_step * static_cast<double>(t - fault_));
  }

  double train_loss(std::int64_t t) const {
    if (faulty(TensorBoardScenario::Exploding, t)) return blowup(curve(fault_), t);
    if (faulty(TensorBoardScenario::LossPlateau, t)) return curve(fault_) * (1 + 1e-5 * u(0, t));
    return curve(t) * (1.0 + a_ * u(0, t));
  }
  double eval_loss(std::int64_t t) const {
    if (faulty(TensorBoardScenario::LossPlateau, t)) {
      return 1.05 * curve(fault_) * (1 + 1e-5 * u(1, t));
    }
    if (faulty(TensorBoardScenario::Overfit, t)) {
      const double rise = static_cast<double>(t - fault_) /
                          static_cast<double>(std::max<std::int64_t>(1, options_.steps - fault_));
      return 1.1 * curve(fault_) * (1.0 + rise);
    }
    return 1.1 * curve(t) * (1.0 + a_ * u(1, t));
  }
  double grad_norm(std::int64_t t) const {
    if (faulty(TensorBoardScenario::Exploding, t)) return blowup(1.0, t);
    return 1.0 + 0.2 * u(2, t);
  }

  const TensorBoardSimulatorOptions& options_;
  int run_;
  std::int64_t fault_;
  double k_ = 0.0;
  double a_ = 0.0;
  std::int64_t blowup_steps_ = 10;
};

void check(const TensorBoardSimulatorOptions& options, std::int64_t fault) {
  const auto invalid = [](const std::string& what) { throw std::invalid_argument(what); };
  if (options.runs < 1 || options.runs > 4096) invalid("runs must be in 1..4096");
  if (options.steps < 20) invalid("steps must be at least 20");
  if (options.extra_tags < 0 || options.extra_tags > 10000) {
    invalid("extra tags must be in 0..10000");
  }
  if (options.eval_every < 1) invalid("eval_every must be at least 1");
  if (options.scenario != TensorBoardScenario::Healthy && (fault < 2 || fault >= options.steps)) {
    invalid("fault step " + std::to_string(fault) + " is outside the job's steps 2.." +
            std::to_string(options.steps - 1));
  }
}

}  // namespace

std::string_view tensorboard_scenario_name(TensorBoardScenario scenario) {
  for (const auto& [value, name] : kNames) {
    if (value == scenario) return name;
  }
  return "unknown";
}

std::optional<TensorBoardScenario> tensorboard_scenario_from_name(std::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

TensorBoardSimulation simulate_tensorboard(const TensorBoardSimulatorOptions& options) {
  const std::int64_t fault = options.fault_step.value_or(options.steps * 6 / 10);
  check(options, fault);
  TensorBoardSimulation simulation;
  simulation.fault_step = options.scenario == TensorBoardScenario::Healthy ? -1 : fault;
  const TensorBoardWriter::Options style{
      .scalars = options.tensor_scalars ? TensorBoardWriter::ScalarStyle::Tensor
                                        : TensorBoardWriter::ScalarStyle::SimpleValue};
  for (int run = 0; run < options.runs; ++run) {
    const auto folder =
        options.runs == 1 ? options.output : options.output / ("run_" + std::to_string(run));
    const RunWriter values(options, run, fault);
    const bool restarts = options.scenario == TensorBoardScenario::Restart;
    {
      TensorBoardWriter writer(folder / "events.out.tfevents.1700000000.simulator.1", style);
      simulation.values += values.write(writer, 0, restarts ? fault : options.steps);
    }
    if (restarts) {
      // The job died at F and resumed from its checkpoint at F / 2, in a new event file.
      TensorBoardWriter writer(folder / "events.out.tfevents.1700000001.simulator.2", style);
      simulation.values += values.write(writer, fault / 2, options.steps);
    }
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(options.output)) {
    if (entry.is_regular_file()) simulation.bytes += entry.file_size();
  }
  return simulation;
}

}  // namespace rulestream
