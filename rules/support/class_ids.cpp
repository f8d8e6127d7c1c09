#include "rules/support/class_ids.hpp"

#include <cmath>

#include "core/model/exceptions.hpp"
#include "rules/support/rule_text.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

RulestreamError bad_classes(const std::string& tensor, std::int64_t step,
                            const std::string& problem) {
  return RulestreamError("tensor " + tensor + " at step " + std::to_string(step) + ": " + problem);
}

}  // namespace

std::vector<std::int64_t> class_ids(const TensorValue& value, ClassEncoding encoding,
                                    const std::string& tensor, std::int64_t step) {
  if (value.is_string() || !is_real_numeric(value.dtype())) {
    throw bad_classes(tensor, step,
                      "holds " + std::string(dtype_name(value.dtype())) + " values, not classes");
  }
  const auto finite_at = [&](std::int64_t i) {
    const double x = value.as_double(i);
    if (!std::isfinite(x)) {
      throw bad_classes(
          tensor, step,
          "element " + std::to_string(i) + " is " + format_figure(x) + ", not a class");
    }
    return x;
  };

  std::vector<std::int64_t> ids;
  if (encoding == ClassEncoding::ByShape) {
    encoding = value.shape().size() >= 2 ? ClassEncoding::Scores : ClassEncoding::Ids;
  }
  if (encoding == ClassEncoding::Ids) {
    ids.reserve(static_cast<std::size_t>(value.size()));
    for (std::int64_t i = 0; i < value.size(); ++i) {
      const double rounded = std::nearbyint(finite_at(i));
      if (rounded < 0) {
        throw bad_classes(tensor, step,
                          "element " + std::to_string(i) + " is " + format_figure(rounded) +
                              ", a negative class");
      }
      ids.push_back(static_cast<std::int64_t>(rounded));
    }
    return ids;
  }

  if (value.shape().size() < 2 || value.shape().back() < 1) {
    throw bad_classes(tensor, step,
                      "needs one score per class along its last axis (shape samples x "
                      "classes) to take the argmax; it has " +
                          std::to_string(value.shape().size()) + " dimension(s)");
  }
  const std::int64_t classes = value.shape().back();
  const std::int64_t samples = value.size() / classes;
  ids.reserve(static_cast<std::size_t>(samples));
  for (std::int64_t sample = 0; sample < samples; ++sample) {
    std::int64_t best = 0;
    double best_score = finite_at(sample * classes);
    for (std::int64_t c = 1; c < classes; ++c) {
      const double score = finite_at(sample * classes + c);
      if (score > best_score) {
        best = c;
        best_score = score;
      }
    }
    ids.push_back(best);
  }
  return ids;
}

std::vector<std::int64_t> class_ids_at(const Trial& trial, const std::vector<std::string>& names,
                                       std::int64_t step, ClassEncoding encoding) {
  std::vector<std::int64_t> ids;
  for (const std::string& name : names) {
    const auto more = class_ids(trial.tensor(name).value(step), encoding, name, step);
    ids.insert(ids.end(), more.begin(), more.end());
  }
  return ids;
}

LabeledPredictions labeled_predictions(const Trial& trial, const std::vector<std::string>& labels,
                                       const std::vector<std::string>& predictions,
                                       std::int64_t step, ClassEncoding encoding) {
  if (labels.empty() || predictions.empty()) {
    throw TensorUnavailableForStep(labels.empty() ? "labels" : "predictions", step, Mode::Global,
                                   "no tensor of them was saved at this step");
  }
  LabeledPredictions result;
  result.labels = class_ids_at(trial, labels, step, ClassEncoding::Ids);
  result.predictions = class_ids_at(trial, predictions, step, encoding);
  result.tensors = labels;
  result.tensors.insert(result.tensors.end(), predictions.begin(), predictions.end());
  if (result.labels.size() != result.predictions.size()) {
    std::string names;
    for (const auto& name : result.tensors) names += (names.empty() ? "" : ", ") + name;
    throw RulestreamError("at step " + std::to_string(step) + " the labels hold " +
                          std::to_string(result.labels.size()) + " samples but the predictions " +
                          std::to_string(result.predictions.size()) + " (tensors " + names + ")");
  }
  return result;
}

}  // namespace rulestream
