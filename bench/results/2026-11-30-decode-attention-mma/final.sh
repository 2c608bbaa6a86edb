#!/usr/bin/env bash
# The session's final build: the GPU suite and fixture parity with the new defaults (decode attention
# on tensor cores, one-round lane groups), then tg128, tg128 at depth 8192 (32 and 64 slices, and the
# FMA decode kernel by STRATA_GPU_DECODE_MMA=0 for reference), pp512, and the 10 GiB tiers' decode.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
parity_fixtures
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|hit' "$out/$name.txt" | tr -s ' ' | head -3 | tr '\n' ' ')"
}
for round in 1 2; do
  run "tg128_r$round" --device gpu -p 0 -n 128 -r 3
  run "d8192_r$round" --device gpu -p 0 -n 128 -d 8192 -r 2
  STRATA_GPU_ATTN_MAX_SPLITS=64 run "d8192_s64_r$round" --device gpu -p 0 -n 128 -d 8192 -r 2
done
STRATA_GPU_DECODE_MMA=0 run d8192_fma --device gpu -p 0 -n 128 -d 8192 -r 2
run pp512 --device gpu -p 512 -n 0 -r 3
run tiers10 --device gpu --vram-budget 10GiB -p 0 -n 64 -r 2
