#!/usr/bin/env bash
# Issue 5, final check of the session's code: the GPU suite and parity on this exact build; then
# decode at depth 8192 with at most 64 (default), 32 or 16 attention slices
# (STRATA_GPU_ATTN_MAX_SPLITS, a timing study), alternated.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|CUDA failed" "$out/gpu_tests.txt" | head -12
parity_fixtures
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1)"
}
run tg128 -p 0 -n 128 -r 3
for round in 1 2; do
  for cap in 64 32 16; do
    STRATA_GPU_ATTN_MAX_SPLITS=$cap run "d8192_cap${cap}_r$round" -p 0 -n 128 -d 8192 -r 2
  done
done
