#!/usr/bin/env bash
# ncu of the decode attention at depth 8192 (tensor-core slices + merge), graphs off so each launch
# is profiled; CUDA_VISIBLE_DEVICES set so that strata does not re-run itself (ncu would follow only
# the parent). Launches before the decode steps are the 8192-token prefill's.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-8l.gguf
layers=8
synth_model
export PATH=$PATH:/usr/local/cuda/bin
CUDA_VISIBLE_DEVICES=0 STRATA_GPU_GRAPHS=0 step ncu_attn 300 ncu -k regex:"attention_flash_mma|attention_merge" \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
  --launch-skip 200 --launch-count 6 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 8 -d 8192 -r 1
grep -E "attention_|Duration|DRAM Throughput|Achieved Occupancy|Warp Cycles Per Issued|Mem Busy|L2 Hit" "$out/ncu_attn.txt" | head -60
