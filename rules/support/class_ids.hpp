#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/tensor_value.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// How a labels or predictions tensor encodes the class of each sample.
enum class ClassEncoding {
  // One number per sample: a class id (XGBoost's labels, multi:softmax predictions) or the
  // probability of class 1 (binary:logistic), rounded to the nearest integer either way.
  Ids,
  // One score per class along the last axis, shape (samples, classes): the class is the index
  // of the largest score, the first one on ties (np.argmax).
  Scores,
  // Scores when the value has two or more dimensions (XGBoost's multi:softprob), else ids.
  ByShape,
};

// The class of every sample of `value`, in order. Throws RulestreamError naming `tensor` and
// `step` for values that hold no classes: strings, complex numbers, NaN or infinite entries,
// negative ids, or scores without a class axis.
std::vector<std::int64_t> class_ids(const TensorValue& value, ClassEncoding encoding,
                                    const std::string& tensor, std::int64_t step);

// The classes of the samples of every tensor in `names` at global `step`, concatenated in that
// order. TensorUnavailableForStep when one of them has no value at the step.
std::vector<std::int64_t> class_ids_at(const Trial& trial, const std::vector<std::string>& names,
                                       std::int64_t step, ClassEncoding encoding);

// The true and predicted class of every sample at a step, for the rules that score a
// classifier (ClassImbalance, Confusion).
struct LabeledPredictions {
  std::vector<std::int64_t> labels;
  std::vector<std::int64_t> predictions;  // same length as labels
  std::vector<std::string> tensors;       // the labels tensors, then the predictions tensors
};

// Reads the labels (class ids) and predictions (per `encoding`) tensors at global `step`.
// TensorUnavailableForStep when either list is empty (the step saved no labels or no
// predictions: nothing to evaluate); RulestreamError naming the tensors when the sample counts
// differ.
LabeledPredictions labeled_predictions(const Trial& trial, const std::vector<std::string>& labels,
                                       const std::vector<std::string>& predictions,
                                       std::int64_t step, ClassEncoding encoding);

}  // namespace rulestream
