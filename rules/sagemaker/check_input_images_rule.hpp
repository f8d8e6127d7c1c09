#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/tensor_value.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's CheckInputImages (seed 002). Every input tensor matching `regex` that is saved
// with its values is a batch of images, samples along the first axis and colour channels along
// axis `channel` (negative counts from the end, as numpy: -1 for NHWC); with channel 0 the
// tensor is a single image. The rule keeps, per tensor, the running mean of every channel over
// all the images seen so far; once at least threshold_samples images have been seen, it fires
// at each step where some channel's mean is further than threshold_mean from 0 (the inputs were
// not normalised to zero mean). A tensor without the channel axis is an error naming it.
class CheckInputImagesRule final : public Rule {
 public:
  struct Options {
    double threshold_mean = 0.2;
    std::int64_t threshold_samples = 500;
    std::vector<std::string> regex{".*hybridsequential0_input_0"};
    std::int64_t channel = 1;
  };

  CheckInputImagesRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "CheckInputImages"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  // What has been seen of one input tensor: per-channel sums and element counts, and images.
  struct ChannelSums {
    std::vector<double> sums;
    std::vector<std::int64_t> counts;
    std::int64_t images = 0;
  };

  // Adds one batch to `seen`; returns false when the value holds no real numbers.
  bool accumulate(const std::string& tensor, std::int64_t step, const TensorValue& value,
                  ChannelSums& seen) const;

  Options options_;
  TensorSelection selection_;
  std::map<std::string, ChannelSums> seen_;
};

}  // namespace rulestream
