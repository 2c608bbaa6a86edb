#!/usr/bin/env bash
# Issue 5: decode kernels that wait on memory fewer times (rows held in registers by the fused
# norms, a butterfly block sum, loads first in q/k norm + rope, two units per round in one-column
# mat-vecs, Q6_K by aligned words): GPU tests, parity, then tg128 A/B against $bin/strata-base
# (the code before) in one run, alternated.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|CUDA failed" "$out/gpu_tests.txt" | head -12
parity_fixtures
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name exe args...
  local name=$1 exe=$2; shift 2
  step "$name" 300 "$bin/$exe" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1)"
}
for round in 1 2 3; do
  run "base_r$round" strata-base -p 0 -n 128 -r 3
  run "new_r$round" strata -p 0 -n 128 -r 3
  STRATA_GPU_MATVEC_UNROLL=1 run "new_unroll1_r$round" strata -p 0 -n 128 -r 3
done
run base_d8192 strata-base -p 0 -n 128 -d 8192 -r 2
run new_d8192 strata -p 0 -n 128 -d 8192 -r 2
run base_pp strata-base -p 512 -n 0 -r 3
run new_pp strata -p 512 -n 0 -r 3
step profile 120 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 32 -r 1 --gpu-profile
grep -E "^\| [a-z]" "$out/profile.txt" | head -20
