#include "core/model/exceptions.hpp"

#include <string>

namespace rulestream {
namespace {

std::string step_text(std::int64_t step, Mode mode) {
  return mode == Mode::Global ? "global step " + std::to_string(step)
                              : std::string(mode_name(mode)) + " step " + std::to_string(step);
}

}  // namespace

TensorUnavailableForStep::TensorUnavailableForStep(std::string tensor, std::int64_t step, Mode mode,
                                                   std::string detail)
    : RulestreamError("tensor '" + tensor + "' is not available for " + step_text(step, mode) +
                      (detail.empty() ? "" : ": " + detail)),
      tensor_(std::move(tensor)),
      step_(step),
      mode_(mode) {}

TensorUnavailable::TensorUnavailable(std::string tensor)
    : RulestreamError("tensor '" + tensor + "' was not saved by the training job"),
      tensor_(std::move(tensor)) {}

StepUnavailable::StepUnavailable(std::int64_t step, Mode mode)
    : RulestreamError(step_text(step, mode) + " was not saved by the training job"),
      step_(step),
      mode_(mode) {}

StepNotYetAvailable::StepNotYetAvailable(std::int64_t step, Mode mode)
    : RulestreamError(step_text(step, mode) + " has not been seen yet"), step_(step), mode_(mode) {}

NoMoreData::NoMoreData(std::string detail)
    : RulestreamError("no more data: the training job has ended" +
                      (detail.empty() ? std::string() : " (" + detail + ")")) {}

MissingCollectionFiles::MissingCollectionFiles(std::string trial_path)
    : RulestreamError("no collection files under " + trial_path +
                      "/collections: was the smdebug hook configured?") {}

RuleEvaluationConditionMet::RuleEvaluationConditionMet(std::string rule, std::int64_t step,
                                                       bool end_of_rule)
    : RulestreamError("evaluation of rule " + rule + " at step " + std::to_string(step) +
                      " resulted in the condition being met"),
      rule_(std::move(rule)),
      step_(step),
      end_of_rule_(end_of_rule) {}

ShapeUnavailableForStep::ShapeUnavailableForStep(std::string tensor, std::int64_t step, Mode mode)
    : RulestreamError("shape of tensor '" + tensor + "' is not available for " +
                      step_text(step, mode)) {}

InvalidWorker::InvalidWorker(std::string worker, std::string tensor, std::int64_t step)
    : RulestreamError("worker '" + worker + "' did not save tensor '" + tensor + "' at step " +
                      std::to_string(step)) {}

CollectionUnavailable::CollectionUnavailable(std::string collection)
    : RulestreamError("the training job declared no collection named '" + collection + "'") {}

FormatError::FormatError(std::string where, std::string what)
    : RulestreamError(where + ": " + what), where_(std::move(where)), detail_(std::move(what)) {}

}  // namespace rulestream
