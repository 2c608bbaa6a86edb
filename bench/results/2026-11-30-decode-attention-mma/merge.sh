#!/usr/bin/env bash
# The split attention's merge kernel with its reads in rounds (strata) against the one before
# (strata_oldmerge, the same tree with the old merge), alternated; the GPU suite and fixture parity
# of the new one first.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
parity_fixtures
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name binary args...
  local name=$1 exe=$2; shift 2
  step "$name" 300 "$bin/$exe" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -2 | tr '\n' ' ')"
}
for round in 1 2; do
  run "old_tg128_r$round" strata_oldmerge -p 0 -n 128 -r 3
  run "new_tg128_r$round" strata -p 0 -n 128 -r 3
  run "old_d8192_r$round" strata_oldmerge -p 0 -n 128 -d 8192 -r 2
  run "new_d8192_r$round" strata -p 0 -n 128 -d 8192 -r 2
  STRATA_GPU_ATTN_MAX_SPLITS=64 run "new_d8192_s64_r$round" strata -p 0 -n 128 -d 8192 -r 2
done
