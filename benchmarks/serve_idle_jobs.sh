#!/bin/bash
# What N followed jobs cost `rulestream serve` while they write nothing (issue 24): N copies of
# one small smdebug job (no end marker) or one small TensorBoard logdir under a root, served
# until every job is Running, then the service's CPU over 20 s (utime + stime from /proc), its
# RSS, threads and descriptors. An smdebug job is followed through the shared inotify instance
# (a rescan every 30 s); a logdir is polled every --poll-interval (1 s).
#
#   benchmarks/serve_idle_jobs.sh RULESTREAM_BINARY [N] [smdebug|tensorboard] [WORK_DIR]
set -euo pipefail
binary=$1
jobs=${2:-1000}
format=${3:-smdebug}
work=${4:-/tmp/serve_idle_jobs}
port=18931

rm -rf "$work"
mkdir -p "$work/root"
if [ "$format" = tensorboard ]; then
  "$binary" simulate --scenario healthy --format tensorboard --steps 50 --out "$work/proto" >/dev/null
else
  "$binary" simulate --scenario healthy --steps 15 --layers 2 --tensor-size 16 --no-end-marker \
    --out "$work/proto" >/dev/null
fi
for i in $(seq -w 1 "$jobs"); do cp -r "$work/proto" "$work/root/job-$i"; done

"$binary" serve --jobs "$work/root" --rule NonFinite --idle-timeout 3600 \
  --listen 127.0.0.1:$port 2>"$work/serve.log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
running=0
for _ in $(seq 1 300); do
  running=$(curl -s 127.0.0.1:$port/api/jobs | python3 -c \
    'import json,sys; print(sum(j["state"] == "Running" for j in json.load(sys.stdin)["jobs"]))' \
    2>/dev/null || echo 0)
  [ "$running" = "$jobs" ] && break
  sleep 1
done
sleep 5  # the first scans and reads of every job done
ticks=$(getconf CLK_TCK)
read -r user1 system1 < <(awk '{print $14, $15}' /proc/$pid/stat)
sleep 20
read -r user2 system2 < <(awk '{print $14, $15}' /proc/$pid/stat)
cpu=$(python3 -c "print(($user2 + $system2 - $user1 - $system1) / $ticks)")
rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/$pid/status)
threads=$(awk '/Threads/ {print $2}' /proc/$pid/status)
fds=$(ls /proc/$pid/fd | wc -l)
echo "| $format | $jobs | $running | $cpu s in 20 s | $rss MiB | $threads | $fds | $(cut -d' ' -f1-3 /proc/loadavg) |"
rescanning=$(grep -c rescanning "$work/serve.log" || true)
[ "$rescanning" = 0 ] || echo "($rescanning watchers fell back to rescanning)"
