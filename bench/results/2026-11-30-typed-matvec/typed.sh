#!/usr/bin/env bash
# Next session, first run (branch wip/typed-matvec): the GPU suite with and without the typed
# one-column mat-vecs (STRATA_GPU_MATVEC_TYPED=1), then tg128 and d8192 A/B by the switch in one
# binary, alternated; then ncu of the expert mat-vecs with source-level stalls (set
# CUDA_VISIBLE_DEVICES so that strata does not re-run itself: ncu would follow only the parent).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 200 "$bin/strata_gpu_tests" --gtest_filter="GpuFused*:*Norm*"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -6
STRATA_GPU_MATVEC_TYPED=1 step gpu_tests_typed 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests_typed.txt" | head -6
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1)"
}
for round in 1 2 3; do
  run "generic_r$round" -p 0 -n 128 -r 3
  STRATA_GPU_MATVEC_TYPED=1 run "typed_r$round" -p 0 -n 128 -r 3
done
export PATH=$PATH:/usr/local/cuda/bin
CUDA_VISIBLE_DEVICES=0 STRATA_GPU_GRAPHS=0 step ncu_experts 200 ncu --target-processes all -k regex:matvec \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters \
  --launch-skip 40 --launch-count 4 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 4 -r 1
grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Waves Per SM" "$out/ncu_experts.txt" | head -30
