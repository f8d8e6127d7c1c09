#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang with AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for SECONDS, from seeds taken from the smdebug
# samples beside the clone and from the inputs the targets' formats are about. Exits non-zero
# as soon as a target finds something: its crash input is kept under build-fuzz/findings/.
#
#   scripts/fuzz.sh SECONDS [TARGET...]     # default: every target
#
# The corpora grow under build-fuzz/corpus/<target> and are reused by the next run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
samples=${RULESTREAM_SAMPLES:-../shared/smdebug-samples}

# Line tables only (-g1): a finding's stack needs files and lines, not variables.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DRULESTREAM_FUZZ=ON -DRULESTREAM_SANITIZE=address,undefined \
  -DRULESTREAM_BUILD_TESTS=OFF -DRULESTREAM_BUILD_BENCHMARKS=OFF >/dev/null
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  for source in tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi
cmake --build build-fuzz -j2 --target "${targets[@]}"

# Seeds: a few real files of each format (the corpus keeps what the fuzzer adds).
seed() {  # seed TARGET FILE...
  local corpus=build-fuzz/corpus/$1
  shift
  mkdir -p "$corpus"
  local file
  for file in "$@"; do [ -f "$file" ] && cp "$file" "$corpus/seed-$(cksum <"$file" | cut -d' ' -f1)"; done
  return 0
}
if [ -d "$samples/trials" ]; then
  mapfile -t events < <(find "$samples/trials" -name '*.tfevents' | sort | head -n 8)
  mapfile -t indexes < <(find "$samples/trials" -path '*/index/*' -name '*.json' | sort | head -n 8)
  mapfile -t collections < <(find "$samples/trials" -name '*_collections.json' | sort | head -n 4)
  seed tfrecord_fuzz "${events[@]}"
  seed index_file_fuzz "${indexes[@]}"
  seed collections_file_fuzz "${collections[@]}"
  # Single records of the event files, as the decoder sees them (length, CRC, payload, CRC).
  mkdir -p build-fuzz/corpus/event_codec_fuzz
  for file in "${events[@]:0:4}"; do
    python3 - "$file" build-fuzz/corpus/event_codec_fuzz <<'EOF'
import struct, sys, zlib
data, out = open(sys.argv[1], "rb").read(), sys.argv[2]
offset = count = 0
while offset + 12 <= len(data) and count < 16:
    (length,) = struct.unpack_from("<Q", data, offset)
    payload = data[offset + 12 : offset + 12 + length]
    open(f"{out}/seed-{zlib.crc32(payload):08x}", "wb").write(payload)
    offset += 16 + length
    count += 1
EOF
  done
fi
tensorboard_samples=${RULESTREAM_TENSORBOARD_SAMPLES:-../shared/tensorboard-samples}
if [ -d "$tensorboard_samples/logdirs" ]; then
  # Real event files of every writer there, the smaller ones whole (-max_len is 1 MiB).
  mapfile -t logs < <(find "$tensorboard_samples/logdirs" -name '*tfevents*' -size -1024k | sort | head -n 12)
  seed tensorboard_fuzz "${logs[@]}"
fi
# Text metrics: the real samples beside the tests (trainer_state.json, CSV logs, JSON lines).
mapfile -t text_metrics < <(find tests/data/text-metrics/jobs -type f \( -name '*.csv' -o -name '*.json' -o -name '*.jsonl' \) -size -256k | sort)
seed text_metrics_fuzz "${text_metrics[@]}"
mkdir -p build-fuzz/corpus/rules_file_fuzz build-fuzz/corpus/s3_xml_fuzz
printf '%s' '{"rules": [{"RuleConfigurationName": "VG", "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}, "Actions": [{"type": "stop", "pid": 1}]}], "sinks": [{"type": "file", "path": "e.jsonl"}, {"type": "webhook", "url": "http://127.0.0.1:9/x", "slack": true, "name": "n"}]}' \
  >build-fuzz/corpus/rules_file_fuzz/seed-rules
printf '%s' '<?xml version="1.0"?><ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t</NextContinuationToken><Contents><Key>p/index/000000000/000000000000_worker_0.json</Key><Size>12</Size><LastModified>2026-11-22T13:56:03.000Z</LastModified></Contents></ListBucketResult>' \
  >build-fuzz/corpus/s3_xml_fuzz/seed-list
printf '%s' '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>' \
  >build-fuzz/corpus/s3_xml_fuzz/seed-error

mkdir -p build-fuzz/findings
status=0
for target in "${targets[@]}"; do
  echo "== $target: ${seconds}s =="
  mkdir -p "build-fuzz/corpus/$target"
  log=build-fuzz/findings/$target.log
  # -rss_limit_mb: a decoder that allocates past 2 GiB is a finding (bounded memory is a contract).
  result=0
  "build-fuzz/tests/fuzz/$target" "build-fuzz/corpus/$target" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -max_len=1048576 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/findings/$target-" >"$log" 2>&1 || result=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done|ERROR|SUMMARY' "$log" || true
  if [ "$result" != 0 ]; then
    echo "fuzz: $target found something (exit $result); the log is $log" >&2
    tail -n 40 "$log" >&2
    status=1
  fi
done
exit "$status"
