#include "python/src/exceptions.hpp"

#include <exception>
#include <string>

#include "core/model/exceptions.hpp"
#include "python/src/python_side.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream::python {
namespace {

// rulestream.exceptions, held for the life of the process (see python_side.cpp).
PyObject* exceptions_module = nullptr;

// Raises rulestream.exceptions.<name>(*args, message=what): the Python error indicator is set
// when this returns, as pybind11's translators must leave it.
void raise(const char* name, const py::tuple& args, const std::exception& error) {
  const py::handle module(exceptions_module);
  const py::object type = module.attr(name);
  py::dict keywords;
  keywords["message"] = py::str(error.what());
  const py::object instance = type(*args, **keywords);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

// Most derived first: catch clauses are tried in order.
void translate(std::exception_ptr pending) {
  if (!pending) return;
  try {
    std::rethrow_exception(pending);
  } catch (const TensorUnavailableForStep& e) {
    raise("TensorUnavailableForStep", py::make_tuple(e.tensor(), e.step(), mode_object(e.mode())),
          e);
  } catch (const TensorUnavailable& e) {
    raise("TensorUnavailable", py::make_tuple(e.tensor()), e);
  } catch (const StepUnavailable& e) {
    raise("StepUnavailable", py::make_tuple(e.step(), mode_object(e.mode())), e);
  } catch (const StepNotYetAvailable& e) {
    raise("StepNotYetAvailable", py::make_tuple(e.step(), mode_object(e.mode())), e);
  } catch (const NoMoreData& e) {
    raise("NoMoreData", py::make_tuple(std::string(e.what())), e);
  } catch (const MissingCollectionFiles& e) {
    raise("MissingCollectionFiles", py::make_tuple(), e);
  } catch (const RuleEvaluationConditionMet& e) {
    raise("RuleEvaluationConditionMet", py::make_tuple(e.rule(), e.step(), e.end_of_rule()), e);
  } catch (const ShapeUnavailableForStep& e) {
    // The C++ exception keeps only its message; the tensor and step are in it.
    raise("ShapeUnavailableForStep", py::make_tuple(py::none(), py::none()), e);
  } catch (const InvalidWorker& e) {
    raise("InvalidWorker", py::make_tuple(py::none()), e);
  } catch (const CollectionUnavailable& e) {
    raise("CollectionUnavailable", py::make_tuple(), e);
  } catch (const ReductionUnsupported& e) {
    raise("ReductionUnsupported", py::make_tuple(), e);
  } catch (const FormatError& e) {
    raise("FormatError", py::make_tuple(), e);
  } catch (const StorageError& e) {
    raise("StorageError", py::make_tuple(), e);
  } catch (const RuleConfigError& e) {
    raise("RuleConfigError", py::make_tuple(), e);
  } catch (const RulestreamError& e) {
    raise("RulestreamError", py::make_tuple(), e);
  }
  // Anything else goes on to pybind11's own translators (std::invalid_argument as ValueError,
  // std::bad_alloc as MemoryError, ...).
}

}  // namespace

void register_exception_translation() {
  exceptions_module = py::module_::import("rulestream.exceptions").inc_ref().ptr();
  py::register_exception_translator(&translate);
}

}  // namespace rulestream::python
