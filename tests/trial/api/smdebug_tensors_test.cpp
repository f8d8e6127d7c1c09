// Conformance of rulestream's Tensor with smdebug's, on real smdebug output: for every tensor
// of every trial under smdebug-samples/trials, its steps, workers, values, shapes, saved and
// computed reductions, mode-relative access and missing-step errors, against what smdebug's
// Python API reported (expected/<name>.json; keys documented in smdebug-samples/README.md).
// Where rulestream deliberately differs (FORMAT.md, last section) the correct value is
// checked instead; see tests/support/reduction_checks.hpp and value_fingerprint.hpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/reduction_checks.hpp"
#include "tests/support/reference_reductions.hpp"
#include "tests/support/smdebug_errors.hpp"
#include "tests/support/smdebug_index_peek.hpp"
#include "tests/support/smdebug_sample_fixture.hpp"
#include "tests/support/value_fingerprint.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

Mode mode_named(const std::string& name) {
  const auto mode = mode_from_name(name);
  if (!mode) throw std::runtime_error("expected file: unknown mode name '" + name + "'");
  return *mode;
}

class SmdebugTensorTest : public SmdebugSampleTest {
 protected:
  // smdebug raised TensorUnavailableForStep for a value the job saved together with its shape
  // (smdebug_index_peek.hpp); rulestream reads it, and the suite checks it another way.
  bool smdebug_lost_value(const Outcome<TensorValue>& ours, const json::value& wanted,
                          const std::string& tensor, std::int64_t global_step,
                          const std::string& worker) const {
    return ours.ok() && json_error(wanted) == "TensorUnavailableForStep" &&
           index_lists_value_and_shape(GetParam().trial_dir, global_step, worker, tensor);
  }

  // Calls `check(tensor, expected tensor entry, where)` for every tensor of the expected file.
  template <typename Check>
  void for_each_tensor(MismatchLog& log, Check check) {
    for (const auto& entry : as_object(member(expected(), "tensors", "trial"), "tensors")) {
      const std::string name(entry.key());
      const Where at = where().with_tensor(name);
      const auto tensor = capture([&] { return trial().tensor(name); });
      if (!tensor.ok()) {
        log.fail(at, "tensors", "rulestream raised " + tensor.describe_error());
        continue;
      }
      check(*tensor.value, as_object(entry.value(), name), at);
    }
  }

  // Calls `check(step, worker, by_worker entry, where)` for every step and worker of a tensor.
  template <typename Check>
  static void for_each_step_and_worker(const json::object& tensor_entry, const Where& at,
                                       Check check) {
    for (const auto& row : as_array(member(tensor_entry, "per_step", at.tensor), "per_step")) {
      const json::object& per_step = as_object(row, "per_step[]");
      const std::int64_t step = json_int(member(per_step, "step", "per_step"), "step");
      const json::object& by_worker =
          as_object(member(per_step, "by_worker", "per_step"), "by_worker");
      for (const auto& worker_entry : by_worker) {
        const std::string worker(worker_entry.key());
        check(step, worker, as_object(worker_entry.value(), "by_worker"),
              at.with_step(step).with_worker(worker));
      }
    }
  }
};

// The value (or smdebug's error) against the expected `value` entry.
void check_value(const Outcome<TensorValue>& ours, const json::value& wanted, const Where& at,
                 std::string_view key, MismatchLog& log) {
  if (const auto error = json_error(wanted)) {
    if (ours.ok()) {
      log.fail(at, key, "rulestream returned a value, smdebug raised " + *error);
    } else if (ours.error != *error) {
      log.fail(at, key,
               "rulestream raised " + ours.describe_error() + ", smdebug raised " + *error);
    }
    return;
  }
  if (!ours.ok()) {
    log.fail(at, key, "rulestream raised " + ours.describe_error() + ", smdebug returned a value");
    return;
  }
  check_value_fingerprint(*ours.value, as_object(wanted, key), at, key, log);
}

TEST_P(SmdebugTensorTest, Steps) {
  MismatchLog log;
  for_each_tensor(log, [&](const Tensor& tensor, const json::object& e, const Where& at) {
    for (const auto* key : {"steps", "steps_incl_incomplete"}) {
      const bool incomplete = std::string_view(key) == "steps_incl_incomplete";
      for (const auto& entry : as_object(member(e, key, at.tensor), key)) {
        const std::string mode(entry.key());
        log.expect_equal(at, std::string(key) + "." + mode,
                         tensor.steps(mode_named(mode), incomplete), json_ints(entry.value(), key));
      }
    }
  });
}

TEST_P(SmdebugTensorTest, ValuesShapesAndWorkers) {
  MismatchLog log;
  for_each_tensor(log, [&](const Tensor& tensor, const json::object& e, const Where& at) {
    for (const auto& row : as_array(member(e, "per_step", at.tensor), "per_step")) {
      const json::object& per_step = as_object(row, "per_step[]");
      const std::int64_t step = json_int(member(per_step, "step", "per_step"), "step");
      const Where at_step = at.with_step(step);

      const std::vector<std::string> workers =
          json_strings(member(per_step, "workers", "per_step"), "workers");
      const auto our_workers = capture([&] { return tensor.workers(step); });
      if (!our_workers.ok()) {
        log.fail(at_step, "workers", "rulestream raised " + our_workers.describe_error());
      } else {
        log.expect_equal(at_step, "workers", *our_workers.value, workers);
      }

      // value(step) without a worker: smdebug's lexicographically first worker.
      const json::value& default_sha = member(per_step, "default_worker_value_sha", "per_step");
      const auto default_value = capture([&] { return tensor.value(step); });
      const std::string first_worker =
          workers.empty() ? std::string() : *std::min_element(workers.begin(), workers.end());
      if (smdebug_lost_value(default_value, default_sha, tensor.name(), step, first_worker)) {
        const auto first_value =
            capture([&] { return tensor.value(step, Mode::Global, first_worker); });
        log.expect_equal(at_step, "default_worker_value_sha (value smdebug lost to its shape)",
                         first_value.ok() && default_value.value->identical_to(*first_value.value),
                         true);
      } else if (const auto error = json_error(default_sha)) {
        if (default_value.ok() || default_value.error != *error) {
          log.fail(at_step, "default_worker_value_sha",
                   (default_value.ok() ? std::string("rulestream returned a value")
                                       : "rulestream raised " + default_value.describe_error()) +
                       ", smdebug raised " + *error);
        }
      } else if (!default_value.ok()) {
        log.fail(at_step, "default_worker_value_sha",
                 "rulestream raised " + default_value.describe_error());
      } else if (default_sha.is_null()) {
        // smdebug hashes only numeric values: the value must be the first worker's strings.
        const auto first_value =
            capture([&] { return tensor.value(step, Mode::Global, first_worker); });
        log.expect_equal(at_step,
                         "default_worker_value_sha (null: strings of " + first_worker + ")",
                         default_value.value->is_string() && first_value.ok() &&
                             default_value.value->identical_to(*first_value.value),
                         true);
      } else {
        log.expect_equal(at_step, "default_worker_value_sha", value_sha256(*default_value.value),
                         json_string(default_sha, "default_worker_value_sha"));
      }
    }

    for_each_step_and_worker(
        e, at,
        [&](std::int64_t step, const std::string& worker, const json::object& wanted,
            const Where& here) {
          const auto value = capture([&] { return tensor.value(step, Mode::Global, worker); });
          const json::value& wanted_value = member(wanted, "value", "by_worker");
          if (smdebug_lost_value(value, wanted_value, tensor.name(), step, worker)) {
            // No fingerprint to compare with: the value must have the saved shape and agree with
            // every reduction the job saved of it.
            if (const auto shape = member(wanted, "shape", "by_worker"); !json_error(shape)) {
              log.expect_equal(here, "value.shape (value smdebug lost to its shape)",
                               value.value->shape(), json_ints(shape, "shape"));
            }
            if (is_real_numeric(value.value->dtype())) {
              const DecodedElements elements = decode_elements(*value.value);
              const json::object& reductions =
                  as_object(member(wanted, "reductions", "by_worker"), "reductions");
              for (const auto& name :
                   json_strings(member(wanted, "saved_reductions", "by_worker"), "saved")) {
                const auto key = reduction_key_from_name(name);
                if (key && reductions.contains(name)) {
                  check_saved_against_value(*key, reductions.at(name), elements, here, log);
                }
              }
            }
          } else {
            check_value(value, wanted_value, here, "value", log);
          }

          const json::value& shape = member(wanted, "shape", "by_worker");
          const auto our_shape = capture([&] { return tensor.shape(step, Mode::Global, worker); });
          if (const auto error = json_error(shape)) {
            if (our_shape.ok() || our_shape.error != *error) {
              log.fail(here, "shape",
                       (our_shape.ok() ? "rulestream gives " + printed(*our_shape.value)
                                       : "rulestream raised " + our_shape.describe_error()) +
                           ", smdebug raised " + *error);
            }
          } else if (!our_shape.ok()) {
            log.fail(here, "shape", "rulestream raised " + our_shape.describe_error());
          } else {
            log.expect_equal(here, "shape", *our_shape.value, json_ints(shape, "shape"));
          }

          const auto saved =
              capture([&] { return tensor.saved_reductions(step, Mode::Global, worker); });
          if (!saved.ok()) {
            log.fail(here, "saved_reductions", "rulestream raised " + saved.describe_error());
          } else {
            std::vector<std::string> names;
            for (const ReductionKey& key : *saved.value) names.push_back(reduction_key_name(key));
            std::sort(names.begin(), names.end());
            std::vector<std::string> wanted_names =
                json_strings(member(wanted, "saved_reductions", "by_worker"), "saved_reductions");
            std::sort(wanted_names.begin(), wanted_names.end());
            log.expect_equal(here, "saved_reductions", names, wanted_names);
          }
        });
  });
}

TEST_P(SmdebugTensorTest, Reductions) {
  MismatchLog log;
  for_each_tensor(log, [&](const Tensor& tensor, const json::object& e, const Where& at) {
    for_each_step_and_worker(
        e, at,
        [&](std::int64_t step, const std::string& worker, const json::object& wanted,
            const Where& here) {
          // The test's own view of the value, for the reference figures and the tolerances.
          const auto value = capture([&] { return tensor.value(step, Mode::Global, worker); });
          std::optional<DecodedElements> elements;
          if (value.ok() && is_real_numeric(value.value->dtype())) {
            elements = decode_elements(*value.value);
          }
          const bool lost = smdebug_lost_value(value, member(wanted, "value", "by_worker"),
                                               tensor.name(), step, worker);
          std::vector<std::string> saved =
              json_strings(member(wanted, "saved_reductions", "by_worker"), "saved_reductions");
          std::sort(saved.begin(), saved.end());

          const json::object& reductions =
              as_object(member(wanted, "reductions", "by_worker"), "reductions");
          for (const auto& entry : reductions) {
            const std::string name(entry.key());
            const auto key = reduction_key_from_name(name);
            if (!key) {
              log.fail(here, "reductions." + name, "the suite does not know this reduction");
              continue;
            }
            const auto ours = capture([&] {
              return tensor.reduction_value(step, key->reduction, Mode::Global, worker, key->abs);
            });
            check_reduction(ReductionCase{*key, entry.value(), ours,
                                          std::binary_search(saved.begin(), saved.end(), name),
                                          value.ok() ? &*value.value : nullptr,
                                          elements ? &*elements : nullptr, lost},
                            here, log);
          }
        });
  });
}

TEST_P(SmdebugTensorTest, ModeRelativeAccess) {
  MismatchLog log;
  for_each_tensor(log, [&](const Tensor& tensor, const json::object& e, const Where& at) {
    for (const auto& entry :
         as_object(member(e, "mode_relative_access", at.tensor), "mode_relative_access")) {
      const Mode mode = mode_named(std::string(entry.key()));
      const json::object& probe = as_object(entry.value(), "mode_relative_access");
      const std::int64_t mode_step = json_int(member(probe, "mode_step", "probe"), "mode_step");
      const auto value = capture([&] { return tensor.value(mode_step, mode); });
      const json::value& wanted =
          probe.contains("error") ? entry.value() : member(probe, "value", "probe");
      const Where here = at.with_step(mode_step, mode);
      const auto global = trial().global_step(mode, mode_step);
      const auto workers = capture([&] { return tensor.workers(global.value_or(-1)); });
      if (global && workers.ok() && !workers.value->empty()) {
        const std::string first = *std::min_element(workers.value->begin(), workers.value->end());
        if (smdebug_lost_value(value, wanted, tensor.name(), *global, first)) {
          // Checked per worker in ValuesShapesAndWorkers: here only that it is the same value.
          const auto by_global =
              capture([&] { return tensor.value(*global, Mode::Global, first); });
          log.expect_equal(here, "mode_relative_access (value smdebug lost to its shape)",
                           by_global.ok() && value.value->identical_to(*by_global.value), true);
          continue;
        }
      }
      check_value(value, wanted, here, "mode_relative_access", log);
    }
  });
}

TEST_P(SmdebugTensorTest, MissingStepProbes) {
  MismatchLog log;
  for_each_tensor(log, [&](const Tensor& tensor, const json::object& e, const Where& at) {
    for (const auto& row :
         as_array(member(e, "missing_step_probes", at.tensor), "missing_step_probes")) {
      const json::object& probe = as_object(row, "missing_step_probes[]");
      const std::int64_t step = json_int(member(probe, "step", "probe"), "step");
      const auto value = capture([&] { return tensor.value(step); });
      check_value(value, probe.contains("error") ? row : member(probe, "value", "probe"),
                  at.with_step(step), "missing_step_probes", log);
    }
  });
}

RULESTREAM_INSTANTIATE_FOR_SAMPLES(SmdebugTensorTest);

}  // namespace
}  // namespace rulestream::testing
