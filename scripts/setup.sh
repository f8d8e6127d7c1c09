#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a working rulestream: installs the Debian
# packages it needs, builds it, and runs it on a small built-in example job.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
# The program alone first, so that the demo comes as soon as it can; the tests, examples and
# benchmarks are built by the test command (scripts/test.sh).
cmake --build build -j2 --target rulestream

bash scripts/demo.sh build/rulestream
