// Conformance of rulestream's Trial with smdebug's, on real smdebug output: for every trial
// under smdebug-samples/trials, what the trial as a whole reports (names, steps, modes,
// workers, collections, step lookups) against expected/<name>.json, which holds what
// smdebug's own Python API reported. Per-tensor checks are in smdebug_tensors_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/smdebug_errors.hpp"
#include "tests/support/smdebug_live_checks.hpp"
#include "tests/support/smdebug_sample_fixture.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

Mode mode_named(const std::string& name) {
  const auto mode = mode_from_name(name);
  if (!mode) throw std::runtime_error("expected file: unknown mode name '" + name + "'");
  return *mode;
}

std::vector<std::string> mode_names(const std::vector<Mode>& modes) {
  std::vector<std::string> names;
  for (const Mode mode : modes) names.emplace_back(mode_name(mode));
  return names;
}

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> optional_mode_name(const std::optional<Mode>& mode) {
  return mode ? std::optional<std::string>(std::string(mode_name(*mode))) : std::nullopt;
}

std::optional<std::string> json_optional_string(const json::value& value, std::string_view key) {
  return value.is_null() ? std::nullopt : std::optional<std::string>(json_string(value, key));
}

std::optional<std::int64_t> json_optional_int(const json::value& value, std::string_view key) {
  return value.is_null() ? std::nullopt : std::optional<std::int64_t>(json_int(value, key));
}

class SmdebugTrialTest : public SmdebugSampleTest {};

TEST_P(SmdebugTrialTest, Summary) {
  MismatchLog log;
  const json::object& e = expected();
  log.expect_equal(where(), "tensor_names", trial().tensor_names(),
                   json_strings(member(e, "tensor_names", "trial"), "tensor_names"));
  // smdebug lists modes in no documented order: compare as sets.
  log.expect_equal(where(), "modes", sorted(mode_names(trial().modes())),
                   sorted(json_strings(member(e, "modes", "trial"), "modes")));
  log.expect_equal(where(), "workers", trial().workers(),
                   json_strings(member(e, "workers", "trial"), "workers"));
  log.expect_equal(where(), "num_workers", static_cast<std::int64_t>(trial().num_workers()),
                   json_int(member(e, "num_workers", "trial"), "num_workers"));
  log.expect_equal(where(), "loaded_all_steps", trial().loaded_all_steps(),
                   member(e, "loaded_all_steps", "trial").as_bool());
  log.expect_equal(where(), "last_complete_step", trial().last_complete_step(),
                   json_int(member(e, "last_complete_step", "trial"), "last_complete_step"));
  log.expect_equal(where(), "has_training_ended", trial().has_training_ended(),
                   member(e, "has_training_ended", "trial").as_bool());
  // Every tensor the expected file describes is one of the trial's.
  for (const auto& entry : as_object(member(e, "tensors", "trial"), "tensors")) {
    const std::string name(entry.key());
    log.expect_equal(where().with_tensor(name), "tensors (has_tensor)", trial().has_tensor(name),
                     true);
  }
}

TEST_P(SmdebugTrialTest, StepsPerMode) {
  MismatchLog log;
  for (const auto* key : {"steps", "steps_incl_incomplete"}) {
    const bool incomplete = std::string_view(key) == "steps_incl_incomplete";
    for (const auto& entry : as_object(member(expected(), key, "trial"), key)) {
      const std::string mode(entry.key());
      log.expect_equal(where(), std::string(key) + "." + mode,
                       trial().steps(mode_named(mode), incomplete), json_ints(entry.value(), key));
    }
  }
}

TEST_P(SmdebugTrialTest, Collections) {
  MismatchLog log;
  const json::object& collections = as_object(member(expected(), "collections", "trial"), "");
  const auto ours = trial().collections();
  std::vector<std::string> our_names;
  for (const auto& [name, collection] : ours) our_names.push_back(name);
  std::vector<std::string> expected_names;
  for (const auto& entry : collections) expected_names.emplace_back(entry.key());
  log.expect_equal(where(), "collections (names)", our_names, sorted(expected_names));

  for (const auto& entry : collections) {
    const std::string name(entry.key());
    const std::string key = "collections." + name;
    const json::object& wanted = as_object(entry.value(), key);
    const auto collection = capture([&] { return trial().collection(name); });
    if (!collection.ok()) {
      log.fail(where(), key, "rulestream raised " + collection.describe_error());
      continue;
    }
    const Collection& c = *collection.value;
    log.expect_equal(where(), key + ".tensor_names",
                     std::vector<std::string>(c.tensor_names.begin(), c.tensor_names.end()),
                     sorted(json_strings(member(wanted, "tensor_names", key), key)));
    log.expect_equal(where(), key + ".include_regex", c.include_regex,
                     json_strings(member(wanted, "include_regex", key), key));

    const json::object& config =
        as_object(member(wanted, "reduction_config", key), key + ".reduction_config");
    log.expect_equal(where(), key + ".reduction_config.save_raw_tensor",
                     c.reduction_config.save_raw_tensor,
                     member(config, "save_raw_tensor", key).as_bool());
    log.expect_equal(where(), key + ".reduction_config.save_shape", c.reduction_config.save_shape,
                     member(config, "save_shape", key).as_bool());
    // One comma-separated string, as the collections file holds it ("" when none).
    const std::string reductions = json_string(member(config, "reductions", key), key);
    std::vector<std::string> wanted_reductions;
    for (std::size_t at = 0; at < reductions.size();) {
      const std::size_t comma = std::min(reductions.find(',', at), reductions.size());
      const std::string spelled = reductions.substr(at, comma - at);
      const auto parsed = reduction_key_from_name(spelled);
      wanted_reductions.push_back(parsed ? reduction_key_name(*parsed) : "unparsable:" + spelled);
      at = comma + 1;
    }
    std::vector<std::string> our_reductions;
    for (const ReductionKey& r : c.reduction_config.reductions) {
      our_reductions.push_back(reduction_key_name(r));
    }
    log.expect_equal(where(), key + ".reduction_config.reductions", our_reductions,
                     wanted_reductions);

    TensorNameQuery query;
    query.collection = name;
    const auto in_trial = capture([&] { return trial().tensor_names(query); });
    if (!in_trial.ok()) {
      log.fail(where(), key + ".tensor_names_in_trial",
               "rulestream raised " + in_trial.describe_error());
    } else {
      log.expect_equal(where(), key + ".tensor_names_in_trial", *in_trial.value,
                       json_strings(member(wanted, "tensor_names_in_trial", key), key));
    }
  }
}

TEST_P(SmdebugTrialTest, StepLookups) {
  MismatchLog log;
  for (const auto& row : as_array(member(expected(), "step_map", "trial"), "step_map")) {
    const json::array& entry = as_array(row, "step_map[]");
    ASSERT_EQ(entry.size(), 3u) << "step_map rows are [global_step, mode, mode_step]";
    const std::int64_t global = json_int(entry[0], "step_map");
    const Where at = where().with_step(global);
    log.expect_equal(at, "step_map.mode", optional_mode_name(trial().mode(global)),
                     json_optional_string(entry[1], "step_map"));
    log.expect_equal(at, "step_map.mode_step", trial().mode_step(global),
                     json_optional_int(entry[2], "step_map"));
  }
  for (const auto& row :
       as_array(member(expected(), "mode_lookup_probes", "trial"), "mode_lookup_probes")) {
    const json::object& probe = as_object(row, "mode_lookup_probes[]");
    const std::int64_t global = json_int(member(probe, "global_step", "probe"), "global_step");
    const Where at = where().with_step(global);
    log.expect_equal(at, "mode_lookup_probes.mode", optional_mode_name(trial().mode(global)),
                     json_optional_string(member(probe, "mode", "probe"), "mode"));
    log.expect_equal(at, "mode_lookup_probes.mode_step", trial().mode_step(global),
                     json_optional_int(member(probe, "mode_step", "probe"), "mode_step"));
  }
  for (const auto& row :
       as_array(member(expected(), "global_step_probes", "trial"), "global_step_probes")) {
    const json::object& probe = as_object(row, "global_step_probes[]");
    const Mode mode = mode_named(json_string(member(probe, "mode", "probe"), "mode"));
    const std::int64_t mode_step = json_int(member(probe, "mode_step", "probe"), "mode_step");
    log.expect_equal(where().with_step(mode_step, mode), "global_step_probes.global_step",
                     trial().global_step(mode, mode_step),
                     json_optional_int(member(probe, "global_step", "probe"), "global_step"));
  }
}

TEST_P(SmdebugTrialTest, HasPassedStep) {
  MismatchLog log;
  for (const auto& row :
       as_array(member(expected(), "has_passed_step", "trial"), "has_passed_step")) {
    const json::object& probe = as_object(row, "has_passed_step[]");
    const Mode mode = mode_named(json_string(member(probe, "mode", "probe"), "mode"));
    const std::int64_t step = json_int(member(probe, "step", "probe"), "step");
    log.expect_equal(where().with_step(step, mode), "has_passed_step",
                     std::string(step_state_name(trial().has_passed_step(step, mode))),
                     json_string(member(probe, "state", "probe"), "state"));
  }
}

TEST_P(SmdebugTrialTest, TensorNamesFiltered) {
  MismatchLog log;
  for (const auto& entry :
       as_object(member(expected(), "tensor_names_filtered", "trial"), "tensor_names_filtered")) {
    const std::string filter(entry.key());
    const std::string key = "tensor_names_filtered." + filter;
    const auto equals = filter.find('=');
    ASSERT_NE(equals, std::string::npos) << key << ": filters are spelled name=value";
    const std::string kind = filter.substr(0, equals);
    const std::string argument = filter.substr(equals + 1);
    TensorNameQuery query;
    if (kind == "step") {
      query.step = std::stoll(argument);
    } else if (kind == "mode") {
      query.mode = mode_named(argument);
    } else if (kind == "regex") {
      query.regex = {argument};
    } else {
      log.fail(where(), key, "the suite does not know the filter '" + kind + "'");
      continue;
    }
    const auto names = capture([&] { return trial().tensor_names(query); });
    if (!names.ok()) {
      log.fail(where(), key, "rulestream raised " + names.describe_error());
      continue;
    }
    log.expect_equal(where(), key, *names.value, json_strings(entry.value(), key));
  }
}

// Only trials without an end marker carry a `live` block (none of today's samples).
TEST_P(SmdebugTrialTest, LiveBlock) {
  const json::value* live = expected().if_contains("live");
  if (live == nullptr || live->is_null()) GTEST_SKIP() << "no live block: the job had ended";
  MismatchLog log;
  check_live_block(trial(), as_object(*live, "live"), where(), log);
}

RULESTREAM_INSTANTIATE_FOR_SAMPLES(SmdebugTrialTest);

}  // namespace
}  // namespace rulestream::testing
