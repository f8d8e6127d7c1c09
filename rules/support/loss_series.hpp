#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/mode.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// One scalar loss observed at a global step, for the rules that follow losses through TRAIN
// and EVAL steps (Overfit, Overtraining).
struct LossObservation {
  std::string tensor;
  double loss = 0.0;
};

// The scalar values of `names` saved at global `step`, in the order of `names`; tensors not saved
// there, saved only as reductions, or not scalars are left out.
std::vector<LossObservation> losses_at(const Trial& trial, const std::vector<std::string>& names,
                                       std::int64_t step);

// The mode of a global step when it is TRAIN or EVAL; nullopt for other modes.
std::optional<Mode> train_or_eval(const Trial& trial, std::int64_t step);

}  // namespace rulestream
