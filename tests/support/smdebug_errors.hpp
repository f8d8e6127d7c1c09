#pragma once

#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace rulestream::testing {

// The name smdebug gives the exception rulestream raised: the same class names for the
// exceptions rulestream mirrors (TensorUnavailableForStep, StepUnavailable, NoMoreData, ...).
// Other exceptions get a name no expected file uses ("ReductionUnsupported",
// "std::exception(...)"), so they can never pass for one of smdebug's.
std::string smdebug_error_name(const std::exception_ptr& error);

// What a call returned, or the smdebug name (and message) of what it threw.
template <typename T>
struct Outcome {
  std::optional<T> value;
  std::string error;    // empty when value is set
  std::string message;  // the exception's what(), for failure messages

  bool ok() const { return value.has_value(); }
  std::string describe_error() const { return error + " (" + message + ")"; }
};

struct Nothing {};

template <typename F>
auto capture(F&& call) {
  using Result = std::invoke_result_t<F&>;
  using Stored = std::conditional_t<std::is_void_v<Result>, Nothing, Result>;
  Outcome<Stored> outcome;
  try {
    if constexpr (std::is_void_v<Result>) {
      call();
      outcome.value.emplace();
    } else {
      outcome.value.emplace(call());
    }
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    outcome.error = smdebug_error_name(error);
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      outcome.message = e.what();
    } catch (...) {
      outcome.message = "a non-standard exception";
    }
  }
  return outcome;
}

}  // namespace rulestream::testing
