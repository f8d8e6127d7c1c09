#include "rules/support/loss_series.hpp"

#include "rules/support/saved_scalar.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

std::vector<LossObservation> losses_at(const Trial& trial, const std::vector<std::string>& names,
                                       std::int64_t step) {
  std::vector<LossObservation> observed;
  for (const std::string& name : names) {
    if (const auto loss = saved_scalar(trial.tensor(name), step, Mode::Global)) {
      observed.push_back({name, *loss});
    }
  }
  return observed;
}

std::optional<Mode> train_or_eval(const Trial& trial, std::int64_t step) {
  const auto mode = trial.mode(step);
  if (mode == Mode::Train || mode == Mode::Eval) return mode;
  return std::nullopt;
}

}  // namespace rulestream
