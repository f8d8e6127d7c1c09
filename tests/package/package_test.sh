#!/usr/bin/env bash
# The installed package as a user meets it (cmake/install.cmake; docs/cpp.md, "In your own C++
# project"), run by CTest (tests/CMakeLists.txt) in three steps sharing one prefix:
#
#   package_test.sh install  BUILD PREFIX
#       cmake --install BUILD --prefix PREFIX, and the layout the README promises.
#   package_test.sh examples SOURCE PREFIX WORK GENERATOR CXX [SANITIZE]
#       builds SOURCE/examples out of tree with find_package(rulestream) from PREFIX alone, runs
#       the example programs, and runs the example plugin's rule and sink with
#       PREFIX/bin/rulestream on a simulated job, checking the steps it fires at.
#   package_test.sh python   PREFIX WORK PYTHON
#       imports the Python package from PREFIX/lib/python3/dist-packages and reads a job.
#
# Nothing here skips: a missing tool or file fails the step, naming it.
set -euo pipefail

fail() {
  echo "package_test: $*" >&2
  exit 1
}

expect_file() {
  [ -f "$1" ] || fail "the install lacks $1"
}

# A job with 20 TRAIN steps whose gradients explode at step 10 (JobScenario::Exploding):
# healthy gradients are N(0, 0.0125), abs mean ~0.01; at 10 they are x1e4 (abs mean ~100), at
# 11 every element is +-Inf, from 12 NaN; the loss is x1e4 at 10, +Inf at 11, NaN from 12.
simulate_job() {
  rm -rf "$2"
  "$1/bin/rulestream" simulate "$2" --scenario exploding --steps 20 --fault-step 10 >/dev/null
}

step="${1:-}"
shift || true
case "$step" in
install)
  build="$1" prefix="$2"
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  expect_file "$prefix/bin/rulestream"
  expect_file "$prefix/include/rulestream/rulestream.hpp"
  expect_file "$prefix/include/rulestream/engine/graph/plugin_api.hpp"
  expect_file "$prefix/include/rulestream/trial/api/trial.hpp"
  expect_file "$prefix/lib/cmake/rulestream/rulestream-config.cmake"
  expect_file "$prefix/lib/cmake/rulestream/rulestream-config-version.cmake"
  expect_file "$prefix/lib/librulestream_model.a"
  # Every header the installed headers include (quoted, from the include root) is installed.
  while IFS= read -r -d '' header; do
    while IFS= read -r included; do
      expect_file "$prefix/include/rulestream/$included"
    done < <(sed -n 's/^#include "\(.*\)"$/\1/p' "$header")
  done < <(find "$prefix/include/rulestream" -name '*.hpp' -print0)
  ;;
examples)
  source="$1" prefix="$2" work="$3" generator="$4" cxx="$5" sanitize="${6:-}"
  rm -rf "$work"
  mkdir -p "$work"
  if [ -n "$sanitize" ]; then
    # The installed libraries carry the sanitizers' calls: what links them must too.
    export CXXFLAGS="-fsanitize=$sanitize -fno-omit-frame-pointer -fno-sanitize=vptr"
    export LDFLAGS="-fsanitize=$sanitize"
  fi
  # Only the prefix: nothing of this build tree or source tree but examples/ itself.
  cmake -S "$source/examples" -B "$work/build" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; fail "examples/ did not configure against $prefix"; }
  cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; fail "examples/ did not build against $prefix"; }

  # The example program simulates its own job (gradients exploding at 20: fires at 20 and 21).
  out="$("$work/build/example_custom_gradient_rule")"
  grep -q "CustomGradientRule fired at step 20 (TRAIN 20)" <<<"$out" || fail "example: $out"
  grep -q "fired 2 times in 40 steps evaluated" <<<"$out" || fail "example: $out"

  # The plugin, run by the installed command: CustomGradientRule (abs mean > 20) fires at 10
  # (abs mean ~100) and 11 (Inf), not at 12 on (NaN > 20 is false) nor before (~0.01).
  simulate_job "$prefix" "$work/job"
  set +e
  "$prefix/bin/rulestream" replay "$work/job" --rule CustomGradientRule \
    --plugin "$work/build/example_custom_gradient_rule_plugin.so" \
    --sink stdout:json --sink "step_list:$work/fired.txt" >"$work/events.jsonl" \
    2>"$work/replay.err"
  status=$?
  set -e
  [ "$status" -eq 1 ] || { cat "$work/replay.err" >&2; fail "replay exited $status, not 1"; }
  steps="$(sed -n 's/.*"kind": "condition_met".*"rule": "CustomGradientRule", "global_step": \([0-9]*\),.*/\1/p' \
    "$work/events.jsonl" | tr '\n' ' ')"
  [ "$steps" = "10 11 " ] || fail "the plugin's rule fired at steps '$steps', not '10 11 '"
  # The plugin's sink type, "step_list", saw the same events.
  [ "$(cat "$work/fired.txt")" = $'CustomGradientRule 10\nCustomGradientRule 11' ] ||
    fail "the plugin's step_list sink wrote '$(cat "$work/fired.txt")'"
  ;;
python)
  prefix="$1" work="$2" python="$3"
  rm -rf "$work"
  mkdir -p "$work"
  simulate_job "$prefix" "$work/job"
  # As the README says to: PYTHONPATH names the prefix. From the work folder, so that no
  # rulestream/ folder of the current one is found first; the module's path is checked too.
  cd "$work"
  PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" -c '
import os, sys
import numpy, rulestream
prefix, job = sys.argv[1], sys.argv[2]
assert rulestream.__file__.startswith(prefix + "/lib/python3/dist-packages/"), rulestream.__file__
trial = rulestream.create_trial(job)
assert trial.steps() == list(range(20)), trial.steps()
weight = trial.tensor("MLP_fc1.weight").value(0)
assert weight.dtype == numpy.float32 and weight.size == 256, (weight.dtype, weight.shape)
loss = trial.tensor("CrossEntropyLoss_output_0")
assert numpy.isinf(loss.value(11)).all() and numpy.isnan(loss.value(12)).all()
print("rulestream from", os.path.dirname(rulestream.__file__))
' "$prefix" "$work/job"
  ;;
*)
  fail "usage: package_test.sh install|examples|python ..."
  ;;
esac
