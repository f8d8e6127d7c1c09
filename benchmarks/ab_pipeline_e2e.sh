#!/usr/bin/env bash
# Compares two builds of pipeline_e2e on the same jobs in one sitting: its replay phases, the
# builds alternated repetition by repetition (A then B, then B then A), so that a noisy machine
# (benchmarks/RESULTS.md, "Known noise") weighs on both alike. Prints each run and, per job and
# rule set, the median seconds and peak RSS of each build and the ratio B / A.
#
#   benchmarks/ab_pipeline_e2e.sh A_PIPELINE_E2E B_PIPELINE_E2E [DATA_DIR] [REPETITIONS]
#
# Jobs (generated once, by A, into DATA_DIR, default /tmp/rulestream-ab): large, 2 workers x
# $LARGE_STEPS steps (default 100); small, 2 workers x $SMALL_STEPS steps (default 200). Rule
# sets: the four rules of issue 3 and all twenty. Threads: $THREADS (default 2).
set -euo pipefail

a=${1:?usage: ab_pipeline_e2e.sh A_PIPELINE_E2E B_PIPELINE_E2E [DATA_DIR] [REPETITIONS]}
b=${2:?usage: ab_pipeline_e2e.sh A_PIPELINE_E2E B_PIPELINE_E2E [DATA_DIR] [REPETITIONS]}
data=${3:-/tmp/rulestream-ab}
repetitions=${4:-5}
large_steps=${LARGE_STEPS:-100}
small_steps=${SMALL_STEPS:-200}
threads=${THREADS:-2}

mkdir -p "$data"
for kind in large small; do
  steps=$large_steps
  [ "$kind" = small ] && steps=$small_steps
  if [ ! -d "$data/$kind-$steps" ]; then
    echo "generating $kind ($steps steps) with A"
    "$a" --phase generate --kind "$kind" --out "$data/$kind-$steps" --steps "$steps" --workers 2
  fi
done

results=$(mktemp)
trap 'rm -f "$results"' EXIT
# One replay: prints "build job rules seconds rss_kib conditions".
replay() {
  local build=$1 binary=$2 job=$3 rules=$4 out rss
  out=$(/usr/bin/time -f 'rss_kib=%M' "$binary" --phase replay --trial "$data/$job" \
          --threads "$threads" --rules "$rules" 2>&1)
  rss=$(grep -o 'rss_kib=[0-9]*' <<<"$out" | cut -d= -f2)
  echo "$build $job $rules $(grep -o 'seconds=[0-9.e+-]*' <<<"$out" | head -1 | cut -d= -f2) $rss" \
       "$(grep -o 'conditions=[0-9]*' <<<"$out" | cut -d= -f2)"
}

for job in "small-$small_steps" "large-$large_steps"; do
  for rules in four all; do
    for ((i = 0; i < repetitions; i++)); do
      if ((i % 2 == 0)); then order="A B"; else order="B A"; fi
      for build in $order; do
        binary=$a
        [ "$build" = B ] && binary=$b
        replay "$build" "$binary" "$job" "$rules" | tee -a "$results"
      done
    done
  done
done

echo
echo "job rules A_median_s B_median_s B/A A_peak_rss_MiB B_peak_rss_MiB conditions(A,B)"
python3 - "$results" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    build, job, rules, seconds, rss, conditions = line.split()
    runs.setdefault((job, rules), {}).setdefault(build, []).append((float(seconds), int(rss), conditions))
for (job, rules), by_build in runs.items():
    a = [s for s, _, _ in by_build["A"]]; b = [s for s, _, _ in by_build["B"]]
    a_rss = max(r for _, r, _ in by_build["A"]) / 1024; b_rss = max(r for _, r, _ in by_build["B"]) / 1024
    conditions = sorted({c for _, _, c in by_build["A"]}), sorted({c for _, _, c in by_build["B"]})
    print(f"{job} {rules} {statistics.median(a):.3f} {statistics.median(b):.3f} "
          f"{statistics.median(b) / statistics.median(a):.3f} {a_rss:.0f} {b_rss:.0f} "
          f"{','.join(conditions[0])};{','.join(conditions[1])}")
EOF
