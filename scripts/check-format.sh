#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (with .clang-format) would write. It checks
# the files git tracks and the new ones it would add (untracked, not ignored), so that a file is
# checked before its first commit, not after.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp')
if [ "${#files[@]}" -eq 0 ]; then exit 0; fi
clang-format --dry-run --Werror "${files[@]}"
echo "formatting: ${#files[@]} files clean"
