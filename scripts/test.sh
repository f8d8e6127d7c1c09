#!/usr/bin/env bash
# The quick start's second command: builds what the first left out (the tests, the examples and
# the benchmarks; scripts/setup.sh builds only the rulestream program, to show the demo sooner)
# and runs every test. Arguments go to ctest ("-R Serve" runs the serve tests only).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build -j2
ctest --test-dir build -j2 --output-on-failure "$@"
