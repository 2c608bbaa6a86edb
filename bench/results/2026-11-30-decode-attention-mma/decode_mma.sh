#!/usr/bin/env bash
# Decode attention on tensor cores (STRATA_GPU_DECODE_MMA=1: the prompt path's mma kernel in key
# slices, merged by the split path's merge) and one-column lane groups wide enough for one round
# (STRATA_GPU_MATVEC_WIDE_LANES=1): the GPU suite and fixture parity with both on, then tg128 and
# tg128 at depth 8192, A/B by the switches in one binary, alternated.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
export STRATA_GPU_DECODE_MMA=1 STRATA_GPU_MATVEC_WIDE_LANES=1
step gpu_tests_mma 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests_mma.txt" | head -12
grep -E "Decode|graph replay" "$out/gpu_tests_mma.txt" | grep -E "nmse|NMSE|OK|FAIL" | head -8
parity_fixtures
unset STRATA_GPU_DECODE_MMA STRATA_GPU_MATVEC_WIDE_LANES
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -2 | tr '\n' ' ')"
}
for round in 1 2; do
  run "base_r$round" -p 0 -n 128 -r 3
  STRATA_GPU_DECODE_MMA=1 run "mma_r$round" -p 0 -n 128 -r 3
  STRATA_GPU_MATVEC_WIDE_LANES=1 run "wide_r$round" -p 0 -n 128 -r 3
  STRATA_GPU_DECODE_MMA=1 STRATA_GPU_MATVEC_WIDE_LANES=1 run "both_r$round" -p 0 -n 128 -r 3
  run "base_d8192_r$round" -p 0 -n 128 -d 8192 -r 2
  STRATA_GPU_DECODE_MMA=1 run "mma_d8192_r$round" -p 0 -n 128 -d 8192 -r 2
done
