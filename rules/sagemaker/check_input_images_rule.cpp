#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/tensor_value.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/real_values.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "trial/api/tensor.hpp"

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

namespace {

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace

CheckInputImagesRule::CheckInputImagesRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_{.regexes = options_.regex} {}

RuleSpec check_input_images_spec() {
  using Options = CheckInputImagesRule::Options;
  RuleSpec spec;
  spec.name = "CheckInputImages";
  spec.aliases = {"check_input_images"};
  spec.description = "input images whose per-channel mean is far from 0 (not normalised)";
  spec.parameters = {
      {"threshold_mean", "float", "0.2", "fires when a channel's mean is further from 0 than this"},
      {"threshold_samples", "int", "500", "images to see before the mean is judged"},
      {"regex", "regex list", ".*hybridsequential0_input_0", "regexes of the input tensors"},
      {"channel", "int", "1", "axis of the colour channel (negative: from the end)"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("CheckInputImages", parameters);
    Options options;
    options.threshold_mean = reader.number("threshold_mean", options.threshold_mean);
    if (options.threshold_mean < 0.0)
      throw reader.invalid("threshold_mean", "must not be negative");
    options.threshold_samples = reader.integer("threshold_samples", options.threshold_samples);
    if (options.threshold_samples < 1)
      throw reader.invalid("threshold_samples", "must be at least 1");
    options.regex = reader.regex_list("regex", options.regex);
    options.channel = reader.integer("channel", options.channel);
    reader.finish();
    return std::unique_ptr<Rule>(new CheckInputImagesRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool CheckInputImagesRule::accumulate(const std::string& tensor, std::int64_t step,
                                      const TensorValue& value, ChannelSums& seen) const {
  const Shape& shape = value.shape();
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t axis = options_.channel < 0 ? rank + options_.channel : options_.channel;
  if (axis < 0 || axis >= rank) {
    throw RulestreamError("rule CheckInputImages: tensor " + tensor + " at step " +
                          std::to_string(step) + " has shape " + shape_text(shape) +
                          ", which has no channel axis " + std::to_string(options_.channel));
  }
  const auto values = real_values(value);
  if (!values || values->empty()) return false;
  const auto channels = static_cast<std::size_t>(shape[static_cast<std::size_t>(axis)]);
  if (seen.sums.empty()) {
    seen.sums.assign(channels, 0.0);
    seen.counts.assign(channels, 0);
  } else if (seen.sums.size() != channels) {
    throw RulestreamError("rule CheckInputImages: tensor " + tensor + " at step " +
                          std::to_string(step) + " has " + std::to_string(channels) +
                          " channels, earlier steps had " + std::to_string(seen.sums.size()));
  }
  // Elements are in C order: the channel of element i is (i / inner) % channels, where inner is
  // the number of elements of the axes after the channel axis.
  std::size_t inner = 1;
  for (auto i = static_cast<std::size_t>(axis) + 1; i < shape.size(); ++i) {
    inner *= static_cast<std::size_t>(shape[i]);
  }
  for (std::size_t i = 0; i < values->size(); ++i) {
    const std::size_t c = (i / inner) % channels;
    seen.sums[c] += (*values)[i];
    ++seen.counts[c];
  }
  seen.images += axis == 0 ? 1 : shape.front();
  return true;
}

bool CheckInputImagesRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  std::string first_detail;
  for (const TensorRef& ref : selection_.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    TensorValue value;
    try {
      value = trial.tensor(ref).value(step);
    } catch (const TensorUnavailableForStep&) {
      continue;  // saved only as reductions at this step: no images to add
    }
    ChannelSums& seen = seen_[name];
    if (!accumulate(name, step, value, seen) || seen.images < options_.threshold_samples) continue;

    std::size_t worst = 0;
    double worst_mean = 0.0;
    for (std::size_t c = 0; c < seen.sums.size(); ++c) {
      const double mean = seen.sums[c] / static_cast<double>(seen.counts[c]);
      if (std::fabs(mean) > std::fabs(worst_mean)) {  // a NaN channel is never the worst
        worst = c;
        worst_mean = mean;
      }
    }
    if (std::fabs(worst_mean) <= options_.threshold_mean) continue;
    if (finding.tensors.size() == kMaxReportedTensors) continue;
    finding.tensors.push_back(name);
    finding.figures.push_back({"channel_mean", worst_mean, name});
    finding.figures.push_back({"channel", static_cast<double>(worst), name});
    finding.figures.push_back({"images", static_cast<double>(seen.images), name});
    if (first_detail.empty()) {
      first_detail = " channel " + std::to_string(worst) + " has mean " +
                     format_figure(worst_mean) + " over " + std::to_string(seen.images) +
                     " images, further from 0 than threshold_mean " +
                     format_figure(options_.threshold_mean) + ": inputs are not normalised";
    }
  }
  if (finding.tensors.empty()) return false;

  finding.figures.push_back({"threshold_mean", options_.threshold_mean, std::nullopt});
  finding.message = finding.tensors.front() + first_detail + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
