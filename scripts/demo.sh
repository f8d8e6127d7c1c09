#!/usr/bin/env bash
# The main job on a built-in example: a simulated two-worker training job whose gradients
# vanish from step 30 is written step by step while `rulestream watch` follows it live; rule
# events appear as the steps land. Then the same job is replayed from disk, as fast as it goes,
# and written as one HTML page (demo-report.html, or $RULESTREAM_DEMO_REPORT).
# Last, a TensorBoard logdir whose loss diverges is watched as it is written.
set -euo pipefail
binary="${1:-build/rulestream}"
demo_dir="$(mktemp -d -t rulestream-demo-XXXXXX)"
watch_pid=""
cleanup() {
  if [ -n "$watch_pid" ]; then kill "$watch_pid" 2>/dev/null || true; fi
  if [ -n "${tb_watch_pid:-}" ]; then kill "$tb_watch_pid" 2>/dev/null || true; fi
  rm -rf "$demo_dir"
}
trap cleanup EXIT
mkdir -p "$demo_dir/job"
rules=(--rule VanishingGradient --rule ExplodingTensor --rule LossNotDecreasing --rule AllZero)

echo "== rulestream watch: following $demo_dir/job while the job writes it =="
"$binary" watch "$demo_dir/job" "${rules[@]}" &
watch_pid=$!

"$binary" simulate "$demo_dir/job" --scenario vanishing_gradients --steps 60 --fault-step 30 \
  --workers 2 --save-interval 5 --tensor-size 4096 --step-delay-ms 60 >/dev/null

# The watch ends by itself once the job's end-of-job marker appears; 1 means a rule fired.
status=0
wait "$watch_pid" || status=$?
watch_pid=""
echo "(watch exited with status $status: 1 means a rule fired)"

echo
echo "== rulestream replay: the same job again, from disk =="
"$binary" replay "$demo_dir/job" "${rules[@]}" --format json | head -n 3 || true
echo "..."

echo
echo "== rulestream report: the same job as one HTML page (curves, rules, firings) =="
report="${RULESTREAM_DEMO_REPORT:-demo-report.html}"
status=0
"$binary" report "$demo_dir/job" "${rules[@]}" -o "$report" || status=$?
echo "(report exited with status $status: 1 means a rule fired; open $report in a browser)"

echo
echo "== rulestream inspect --tensor: one gradient, step by step =="
"$binary" inspect "$demo_dir/job" --tensor gradient/MLP_fc1.weight

echo
echo "== rulestream watch: a TensorBoard logdir whose loss diverges from step 120 =="
echo "   (no rule named: the default set; each problem is one incident, opened and resolved)"
mkdir -p "$demo_dir/tb"
"$binary" watch "$demo_dir/tb" --poll-interval 0.05 &
tb_watch_pid=$!
"$binary" simulate "$demo_dir/tb" --format tensorboard --scenario exploding --steps 200 \
  --fault-step 120 --step-delay-ms 10 >/dev/null
sleep 0.5
# A logdir has no end-of-job marker: the watch runs until it is stopped, then reports.
kill -TERM "$tb_watch_pid"
status=0
wait "$tb_watch_pid" || status=$?
tb_watch_pid=""
echo "(watch exited with status $status: 1 means a rule fired)"
