#!/usr/bin/env bash
# Builds the test suites with ThreadSanitizer (build-tsan, clang) and runs them through CTest,
# or those whose names match REGEX. Exits non-zero on a data race or a failed test.
#
#   scripts/tsan.sh [REGEX]
#
# oneTBB's library is not built with TSan: what it synchronizes inside its scheduler (a task
# spawned, a flow-graph message handed on) TSan cannot see, so races it reports across such a
# hand-off in TBB's own frames are suppressed (scripts/tsan.supp, each entry with its reason).
# Everything rulestream synchronizes itself is checked.
set -euo pipefail
cd "$(dirname "$0")/.."

CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRULESTREAM_SANITIZE=thread -DRULESTREAM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-tsan -j2
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
if [ $# -gt 0 ]; then
  ctest --test-dir build-tsan -j2 --output-on-failure -R "$1"
else
  ctest --test-dir build-tsan -j2 --output-on-failure
fi
