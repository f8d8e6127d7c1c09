#!/usr/bin/env bash
# The main job on a built-in example: simulate a small training job whose gradients vanish
# from step 30, then look at it the way a rule would.
set -euo pipefail
binary="${1:-build/rulestream}"
demo_dir="$(mktemp -d -t rulestream-demo-XXXXXX)"
trap 'rm -rf "$demo_dir"' EXIT

echo "== simulating a training job whose gradients vanish from step 30 =="
"$binary" simulate "$demo_dir/job" --scenario vanishing_gradients --steps 60 --fault-step 30 \
  --workers 2 --save-interval 5 --tensor-size 4096

echo
echo "== rulestream inspect: what the job saved =="
"$binary" inspect "$demo_dir/job"

echo
echo "== rulestream inspect --tensor: one gradient, step by step (its mean of |values| collapses at step 30) =="
"$binary" inspect "$demo_dir/job" --tensor gradient/MLP_fc1.weight
