#!/usr/bin/env bash
# Builds the test suites with ThreadSanitizer (build-tsan, GCC: Debian's clang 14 cannot build
# the tests, which use std::source_location) and runs them through CTest,
# or those whose names match REGEX. Exits non-zero on a data race or a failed test.
#
#   scripts/tsan.sh [REGEX]
#
# oneTBB's library is not built with TSan: what it synchronizes inside its scheduler (a task
# spawned, a flow-graph message handed on) TSan cannot see. Reports whose racing access is in
# oneTBB's own templates are suppressed (scripts/tsan.supp). Reports in rulestream's frames across
# such a hand-off remain: a parallel_for's captures written before it and read in its tasks, a
# flow-graph message built by one node and read by the next. As of 2026-11-26 the smdebug
# pipeline's tests (RulePipeline*, RuleActions*, RewrittenEventFile*) report those; the
# TensorBoard pipeline, series evaluator, webhook sink, credentials, stop action and local
# watcher tests run clean. Annotating rulestream's side of the hand-offs (__tsan_release before
# the call, __tsan_acquire in the task) was tried and does not help: a task reads its body's
# closure, which the caller wrote, and oneTBB copied, after any release rulestream can make,
# before it can reach a token to acquire. Only an instrumented oneTBB would.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRULESTREAM_SANITIZE=thread -DRULESTREAM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-tsan -j2
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
if [ $# -gt 0 ]; then
  ctest --test-dir build-tsan -j2 --output-on-failure -R "$1"
else
  ctest --test-dir build-tsan -j2 --output-on-failure
fi
