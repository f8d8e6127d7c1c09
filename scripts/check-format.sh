#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (with .clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [ "${#files[@]}" -eq 0 ]; then exit 0; fi
clang-format --dry-run --Werror "${files[@]}"
echo "formatting: ${#files[@]} files clean"
