#include "tests/support/smdebug_live_checks.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "tests/support/smdebug_errors.hpp"
#include "tests/support/smdebug_expected.hpp"
#include "tests/support/value_fingerprint.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

// smdebug waited 6 s in a thread; rulestream's wait_for_steps takes the timeout itself. A
// step that is not coming stays unavailable however long one waits, so a short wait keeps
// the suite fast without changing the answer.
constexpr std::chrono::milliseconds kWaitTimeout{500};

Mode mode_of(const json::object& probe, std::string_view where) {
  const json::value* mode = probe.if_contains("mode");
  if (mode == nullptr || mode->is_null()) return Mode::Global;
  const std::string name = json_string(*mode, where);
  const auto parsed = mode_from_name(name);
  if (!parsed)
    throw std::runtime_error("expected file: unknown mode '" + name + "' in " + std::string(where));
  return *parsed;
}

const json::value* first_of(const json::object& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (const json::value* found = object.if_contains(key)) return found;
  }
  return nullptr;
}

// The workers that saved anything at a global step, over every tensor.
std::vector<std::string> workers_at(const Trial& trial, std::int64_t step) {
  std::set<std::string> workers;
  for (const auto& name : trial.tensor_names()) {
    const Tensor tensor = trial.tensor(name);
    const auto steps = tensor.steps(Mode::Global, true);
    if (!std::binary_search(steps.begin(), steps.end(), step)) continue;
    for (auto& worker : tensor.workers(step)) workers.insert(std::move(worker));
  }
  return {workers.begin(), workers.end()};
}

void check_workers_for_global_step(const Trial& trial, const json::value& wanted,
                                   const Where& where, MismatchLog& log) {
  auto check = [&](std::int64_t step, const json::value& workers) {
    std::vector<std::string> expected = json_strings(workers, "live.workers_for_global_step");
    std::sort(expected.begin(), expected.end());
    log.expect_equal(where.with_step(step), "live.workers_for_global_step", workers_at(trial, step),
                     expected);
  };
  if (wanted.is_object()) {
    for (const auto& entry : wanted.get_object())
      check(std::stoll(std::string(entry.key())), entry.value());
    return;
  }
  for (const auto& row : as_array(wanted, "live.workers_for_global_step")) {
    const json::object& probe = as_object(row, "live.workers_for_global_step[]");
    check(json_int(member(probe, "step", "live"), "step"), member(probe, "workers", "live"));
  }
}

void check_wait_for_steps(const Trial& trial, const json::value& wanted, const Where& where,
                          MismatchLog& log) {
  const json::array rows = wanted.is_array() ? wanted.get_array() : json::array{wanted};
  for (const auto& row : rows) {
    const json::object& probe = as_object(row, "live.wait_for_steps[]");
    std::vector<std::int64_t> steps;
    if (const json::value* many = probe.if_contains("steps")) {
      steps = json_ints(*many, "live.wait_for_steps.steps");
    } else {
      steps.push_back(json_int(member(probe, "step", "live.wait_for_steps"), "step"));
    }
    const Mode mode = mode_of(probe, "live.wait_for_steps");
    const json::value* outcome = first_of(probe, {"outcome", "result", "error"});
    if (outcome == nullptr) {
      log.fail(where, "live.wait_for_steps", "no outcome in " + json_text(row));
      continue;
    }
    std::string expected = json_string(*outcome, "live.wait_for_steps.outcome");
    // smdebug's thread either returned, was still blocked when the timeout passed, or raised.
    if (expected == "returned" || expected == "ok" || expected == "available") expected = "";
    if (expected == "timeout" || expected == "timed_out" || expected == "blocked" ||
        expected == "still_waiting") {
      expected = "StepNotYetAvailable";  // what rulestream raises when its timeout passes
    }
    const auto ours = capture([&] { trial.wait_for_steps(steps, mode, kWaitTimeout); });
    const std::string ours_text = ours.ok() ? std::string() : ours.error;
    if (ours_text != expected) {
      log.fail(where.with_step(steps.empty() ? -1 : steps.front(), mode), "live.wait_for_steps",
               "rulestream " +
                   (ours.ok() ? std::string("returned") : "raised " + ours.describe_error()) +
                   ", smdebug: " + json_text(*outcome));
    }
  }
}

void check_value_probes(const Trial& trial, const json::value& wanted, const Where& where,
                        MismatchLog& log) {
  for (const auto& row : as_array(wanted, "live.values")) {
    const json::object& probe = as_object(row, "live.values[]");
    const std::string tensor = json_string(member(probe, "tensor", "live.values"), "tensor");
    const std::int64_t step = json_int(member(probe, "step", "live.values"), "step");
    const Mode mode = mode_of(probe, "live.values");
    std::optional<std::string> worker;
    if (const json::value* w = probe.if_contains("worker"); w != nullptr && !w->is_null()) {
      worker = json_string(*w, "live.values.worker");
    }
    const Where at =
        where.with_tensor(tensor).with_step(step, mode).with_worker(worker.value_or(""));
    const auto ours = capture([&] { return trial.tensor(tensor).value(step, mode, worker); });
    if (const auto error = json_error(row); error || probe.contains("error")) {
      const std::string name =
          error ? *error : json_string(member(probe, "error", "live"), "error");
      if (ours.ok() || ours.error != name) {
        log.fail(at, "live.values",
                 (ours.ok() ? std::string("rulestream returned a value")
                            : "rulestream raised " + ours.describe_error()) +
                     ", smdebug raised " + name);
      }
      continue;
    }
    if (!ours.ok()) {
      log.fail(at, "live.values", "rulestream raised " + ours.describe_error());
      continue;
    }
    const json::value& value = member(probe, "value", "live.values");
    if (const auto error = json_error(value)) {
      log.fail(at, "live.values", "rulestream returned a value, smdebug raised " + *error);
      continue;
    }
    check_value_fingerprint(*ours.value, as_object(value, "live.values.value"), at, "live.values",
                            log);
  }
}

}  // namespace

void check_live_block(const Trial& trial, const json::object& live, const Where& where,
                      MismatchLog& log) {
  const auto complete = trial.steps(Mode::Global);
  const auto all = trial.steps(Mode::Global, true);
  std::vector<std::int64_t> incomplete;
  std::set_difference(all.begin(), all.end(), complete.begin(), complete.end(),
                      std::back_inserter(incomplete));

  for (const auto& entry : live) {
    const std::string key(entry.key());
    const json::value& wanted = entry.value();
    const std::string where_key = "live." + key;
    if (key == "complete_steps" || key == "steps") {
      log.expect_equal(where, where_key, complete, json_ints(wanted, where_key));
    } else if (key == "steps_incl_incomplete") {
      log.expect_equal(where, where_key, all, json_ints(wanted, where_key));
    } else if (key == "incomplete_steps") {
      log.expect_equal(where, where_key, incomplete, json_ints(wanted, where_key));
    } else if (key == "last_complete_step") {
      log.expect_equal(where, where_key, trial.last_complete_step(), json_int(wanted, where_key));
    } else if (key == "loaded_all_steps") {
      log.expect_equal(where, where_key, trial.loaded_all_steps(), wanted.as_bool());
    } else if (key == "has_training_ended") {
      log.expect_equal(where, where_key, trial.has_training_ended(), wanted.as_bool());
    } else if (key == "workers_for_global_step") {
      check_workers_for_global_step(trial, wanted, where, log);
    } else if (key == "has_passed_step") {
      for (const auto& row : as_array(wanted, where_key)) {
        const json::object& probe = as_object(row, where_key);
        const Mode mode = mode_of(probe, where_key);
        const std::int64_t step = json_int(member(probe, "step", where_key), "step");
        log.expect_equal(where.with_step(step, mode), where_key,
                         std::string(step_state_name(trial.has_passed_step(step, mode))),
                         json_string(member(probe, "state", where_key), "state"));
      }
    } else if (key == "wait_for_steps") {
      check_wait_for_steps(trial, wanted, where, log);
    } else if (key == "values" || key == "value_probes") {
      check_value_probes(trial, wanted, where, log);
    } else if (key != "note" && key != "comment") {
      log.fail(where, where_key,
               "the suite does not know this key of the live block; extend "
               "tests/support/smdebug_live_checks.cpp: " +
                   json_text(wanted));
    }
  }
}

}  // namespace rulestream::testing
