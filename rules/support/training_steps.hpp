#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// TRAIN steps, and the steps of a job that saves without modes (GLOBAL). Weights change only
// there: an EVAL phase saves the same weights step after step, so rules about how tensors move
// (UnchangedTensor, WeightUpdateRatio) or about the first iterations (PoorWeightInitialization)
// look at training steps only and stay quiet at EVAL and PREDICT steps.
bool is_training_step(const Trial& trial, std::int64_t step);

// One tensor's newest training steps at which it was saved, at most `depth`, so a rule finds
// "the previous saved steps" in constant time at every step (Tensor::prev_steps lists every step
// of the tensor, which over a long job makes a rule quadratic): step numbers only, the values
// are read again through Tensor::value. A rule keeps one per tensor with the rest of that
// tensor's state (TensorStates); different tensors' may advance on different threads at once,
// one tensor's on one thread at a time.
class TensorSaves {
 public:
  // Inline for the few steps rules look back.
  using Steps = boost::container::small_vector<std::int64_t, 4>;

  // The training steps before `step` at which `tensor` was saved, oldest first, at most
  // `depth`; then records that it was saved at training step `step`. The first call seeds the
  // steps from the trial (a rule started in mid-job, a tensor first selected now).
  Steps advance(const Trial& trial, const Tensor& tensor, std::int64_t step, std::size_t depth);

 private:
  bool seeded_ = false;
  std::vector<std::int64_t> steps_;
};

}  // namespace rulestream
