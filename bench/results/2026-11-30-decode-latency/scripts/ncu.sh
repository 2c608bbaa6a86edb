#!/usr/bin/env bash
# Issue 5: one decode layer's kernels under ncu (eager steps, an 8-layer synthetic model of the
# benchmark's shapes): speed of light, launch, occupancy, warp stalls. CUDA_VISIBLE_DEVICES is set
# here so that strata keeps it and does not re-run itself (ncu would follow only the parent).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-8l.gguf
synth_model
export PATH=$PATH:/usr/local/cuda/bin
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats)
CUDA_VISIBLE_DEVICES=0 STRATA_GPU_GRAPHS=0 step ncu_layer 170 ncu --target-processes all "${sections[@]}" \
  --launch-skip 300 --launch-count 13 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 8 -r 1
grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Block Size|Grid Size|Stall|Waves Per SM" "$out/ncu_layer.txt" | head -200
