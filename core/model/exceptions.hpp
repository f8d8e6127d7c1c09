#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/model/mode.hpp"

namespace rulestream {

// Base of every error rulestream raises on purpose. Messages name the path, step and tensor.
class RulestreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// smdebug's exceptions, with the same names and meanings (seed 001).

// The tensor was saved, but not at this step; it never will be.
class TensorUnavailableForStep : public RulestreamError {
 public:
  TensorUnavailableForStep(std::string tensor, std::int64_t step, Mode mode,
                           std::string detail = {});
  const std::string& tensor() const { return tensor_; }
  std::int64_t step() const { return step_; }
  Mode mode() const { return mode_; }

 private:
  std::string tensor_;
  std::int64_t step_;
  Mode mode_;
};

// The trial has not seen this tensor at any step.
class TensorUnavailable : public RulestreamError {
 public:
  explicit TensorUnavailable(std::string tensor);
  const std::string& tensor() const { return tensor_; }

 private:
  std::string tensor_;
};

// The step was not saved by the training job; nothing will be available for it.
class StepUnavailable : public RulestreamError {
 public:
  StepUnavailable(std::int64_t step, Mode mode);
  std::int64_t step() const { return step_; }
  Mode mode() const { return mode_; }

 private:
  std::int64_t step_;
  Mode mode_;
};

// The step has not been seen yet; it may still come while the job is running.
class StepNotYetAvailable : public RulestreamError {
 public:
  StepNotYetAvailable(std::int64_t step, Mode mode);
  std::int64_t step() const { return step_; }
  Mode mode() const { return mode_; }

 private:
  std::int64_t step_;
  Mode mode_;
};

// The training job has ended: there will be no more steps or tensors.
class NoMoreData : public RulestreamError {
 public:
  explicit NoMoreData(std::string detail);
};

// The training job saved no collection files: the hook was probably not configured.
class MissingCollectionFiles : public RulestreamError {
 public:
  explicit MissingCollectionFiles(std::string trial_path);
};

// A rule's condition was met at a step.
class RuleEvaluationConditionMet : public RulestreamError {
 public:
  RuleEvaluationConditionMet(std::string rule, std::int64_t step, bool end_of_rule = false);
  const std::string& rule() const { return rule_; }
  std::int64_t step() const { return step_; }
  bool end_of_rule() const { return end_of_rule_; }

 private:
  std::string rule_;
  std::int64_t step_;
  bool end_of_rule_;
};

// Neither a saved shape nor a value exists for the tensor at this step.
class ShapeUnavailableForStep : public RulestreamError {
 public:
  ShapeUnavailableForStep(std::string tensor, std::int64_t step, Mode mode);
};

// A worker name that did not save this tensor at this step.
class InvalidWorker : public RulestreamError {
 public:
  InvalidWorker(std::string worker, std::string tensor, std::int64_t step);
};

// A collection name the training job did not declare.
class CollectionUnavailable : public RulestreamError {
 public:
  explicit CollectionUnavailable(std::string collection);
};

// A reduction that cannot be taken of this value (strings, min of an empty tensor, ...).
class ReductionUnsupported : public RulestreamError {
 public:
  using RulestreamError::RulestreamError;
};

// Bytes on disk that do not follow the format: a bad CRC, a malformed proto or JSON.
// `where` names the file (and offset) at fault.
class FormatError : public RulestreamError {
 public:
  FormatError(std::string where, std::string what);
  const std::string& where() const { return where_; }
  // What is wrong, without the where.
  const std::string& detail() const { return detail_; }

 private:
  std::string where_;
  std::string detail_;
};

// A path that cannot be read: missing, not a trial, permission denied.
class StorageError : public RulestreamError {
 public:
  using RulestreamError::RulestreamError;
};

// Storage that refused these credentials (S3's 403 AccessDenied, a rejected session token):
// trying again will not help until someone grants the access, so a caller that retries what
// may pass (a service looking at its jobs every poll) gives up on this one and says why.
class StorageAccessDenied : public StorageError {
 public:
  using StorageError::StorageError;
};

// Something wrong with the data that was reported and skipped (never silently ignored).
struct TrialProblem {
  std::string path;
  std::string message;
};

}  // namespace rulestream
