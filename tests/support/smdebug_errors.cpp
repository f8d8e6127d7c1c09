#include "tests/support/smdebug_errors.hpp"

#include "core/model/exceptions.hpp"

namespace rulestream::testing {

std::string smdebug_error_name(const std::exception_ptr& error) {
  // Most derived first: catch clauses are tried in order.
  try {
    std::rethrow_exception(error);
  } catch (const TensorUnavailableForStep&) {
    return "TensorUnavailableForStep";
  } catch (const TensorUnavailable&) {
    return "TensorUnavailable";
  } catch (const StepUnavailable&) {
    return "StepUnavailable";
  } catch (const StepNotYetAvailable&) {
    return "StepNotYetAvailable";
  } catch (const NoMoreData&) {
    return "NoMoreData";
  } catch (const MissingCollectionFiles&) {
    return "MissingCollectionFiles";
  } catch (const ShapeUnavailableForStep&) {
    return "ShapeUnavailableForStep";
  } catch (const InvalidWorker&) {
    return "InvalidWorker";
  } catch (const RuleEvaluationConditionMet&) {
    return "RuleEvaluationConditionMet";
  } catch (const CollectionUnavailable&) {
    return "CollectionUnavailable";
  } catch (const ReductionUnsupported&) {
    return "ReductionUnsupported";
  } catch (const FormatError&) {
    return "FormatError";
  } catch (const StorageError&) {
    return "StorageError";
  } catch (const RulestreamError&) {
    return "RulestreamError";
  } catch (const std::exception& e) {
    return std::string("std::exception(") + e.what() + ")";
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace rulestream::testing
