#!/usr/bin/env bash
# Issue 5, second round: the split attention's merge reads its slices once, the router's
# routing keeps its exponentials; A/B against $bin/strata-base (the first round, run with
# STRATA_GPU_MATVEC_UNROLL=1, the configuration committed), alternated; lane-group widths as a
# timing study; then the tiers' decode with today's kernels.
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
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*experts://')"
}
export STRATA_GPU_MATVEC_UNROLL=1
for round in 1 2; do
  run "base_r$round" strata-base -p 0 -n 128 -r 3
  run "new_r$round" strata -p 0 -n 128 -r 3
  STRATA_GPU_MATVEC_LANE_UNITS=2 run "lanes2_r$round" strata -p 0 -n 128 -r 3
  STRATA_GPU_MATVEC_LANE_UNITS=4 run "lanes4_r$round" strata -p 0 -n 128 -r 3
done
for round in 1 2; do
  run "base_d8192_r$round" strata-base -p 0 -n 128 -d 8192 -r 2
  run "new_d8192_r$round" strata -p 0 -n 128 -d 8192 -r 2
done
run new_pp strata -p 512 -n 0 -r 3
for round in 1 2; do
  run "b10_r$round" strata -p 0 -n 64 -r 3 --vram-budget 10GiB
  run "ram_r$round" strata -p 0 -n 64 -r 3 --expert-slots 0
done
