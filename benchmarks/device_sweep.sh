#!/usr/bin/env bash
# Issue 23's 16-core sweep on a lent machine (the `device` tool), in one call.
#
#   here:   bash benchmarks/device_sweep.sh pack     # after: cmake --build build-rel --target pipeline_e2e shared_bytes_bench
#   there:  run(command="bash benchmarks/device_sweep.sh run", carry=[".devrun"], timeout_s=540)
#   a try here: bash benchmarks/device_sweep.sh pack && bash benchmarks/device_sweep.sh run 1,2
#
# `pack` copies the Release pipeline_e2e and the shared libraries it needs (all but glibc's own,
# which the machine has) into .devrun/ (git-ignored). `run` prints the machine, then runs the
# sweep of benchmarks/RESULTS.md ("pipeline_e2e --threads-sweep") over 1-16 threads, large job
# then small (the counts: `run 1,2,4` for others), and writes its output to $OUT/sweep.txt; then
# shared_bytes_bench on 1-16 threads into $OUT/shared-bytes.txt (what threads slicing one file's
# bytes pay: the reason TrialStore::read_records counts each batch apart).
# Then, where the machine has perf, it profiles the small job's replays at the last count (four
# rules, then all twenty) into $OUT/profile-*.txt: if a node caps the sweep, the same call says
# where its time goes (lent machines are rare; a second call may not come). About six minutes on
# 16 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  pack)
    binary=build-rel/benchmarks/pipeline_e2e
    [[ -x $binary ]] || { echo "device_sweep.sh: build $binary first (Release, build-rel)" >&2; exit 2; }
    rm -rf .devrun && mkdir -p .devrun/lib
    cp "$binary" .devrun/
    bench=build-rel/benchmarks/shared_bytes_bench
    [[ -x $bench ]] || { echo "device_sweep.sh: build $bench first (Release, build-rel)" >&2; exit 2; }
    cp "$bench" .devrun/
    ldd "$binary" "$bench" | awk '$3 ~ /^\// {print $3}' | sort -u |
      grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
      xargs -I{} cp -L {} .devrun/lib/
    echo "packed $(du -sh .devrun | cut -f1) into .devrun ($(git rev-parse --short HEAD))"
    ;;
  run)
    out=${OUT:-/tmp/device-sweep}
    counts=${2:-1,2,4,8,16}
    mkdir -p "$out"
    export LD_LIBRARY_PATH=$PWD/.devrun/lib
    {
      echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
      nproc || true
      lscpu | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)' || true
      free -g 2>/dev/null | head -2 || true
      .devrun/pipeline_e2e --threads-sweep "$counts" --only large,small --large-steps 100 \
        --small-steps 200 --repetitions 3 --data /tmp/sweep-data --keep
    } 2>&1 | tee "$out/sweep.txt"
    .devrun/shared_bytes_bench --benchmark_min_time=0.3 --benchmark_repetitions=3 \
      --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
      >"$out/shared-bytes.txt" 2>&1 || true
    if command -v perf >/dev/null; then
      threads=${counts##*,}
      for rules in four all; do
        # What the replay prints (its serial nodes, the writer's waits), then where its CPU went.
        perf record -q -g -o /tmp/device-sweep.perf .devrun/pipeline_e2e --phase replay \
          --trial /tmp/sweep-data/small-job --rules "$rules" --threads "$threads" \
          --cpus "$threads" >"$out/profile-small-$rules-$threads.txt" 2>&1 || true
        perf report -i /tmp/device-sweep.perf --no-children --percent-limit 0.5 --stdio -g none \
          >>"$out/profile-small-$rules-$threads.txt" 2>&1 || true
        perf report -i /tmp/device-sweep.perf --no-children --percent-limit 2 --stdio \
          -g caller,0.5,callee --max-stack 12 >>"$out/profile-small-$rules-$threads.txt" 2>&1 || true
      done
    else
      echo "device_sweep.sh: no perf on this machine, so no profile" | tee -a "$out/sweep.txt"
    fi
    rm -rf /tmp/sweep-data /tmp/device-sweep.perf
    ;;
  *)
    echo "usage: device_sweep.sh pack|run" >&2
    exit 2
    ;;
esac
