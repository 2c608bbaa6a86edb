#!/usr/bin/env bash
# Issue 9: does the link's copy traffic slow the decode step's serial chain on the GPU?
# scratch/chain is scratch/chain_under_copies.cu built with `nvcc -O2 -arch=sm_90 -o scratch/chain
# scratch/chain_under_copies.cu` (its first version, without the 5 MB and event rows, gave
# raw/chain/chainbench.txt; this one gave raw/chain/chainbench_extended.txt, run alone).
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
step chainbench 120 "$(dirname "$0")/scratch/chain"
cat "$out/chainbench.txt"
step gpu_prof_tests 120 "$bin/strata_gpu_tests" --gtest_filter='GpuOpProfiler*:GpuOpAblation*'
tail -3 "$out/gpu_prof_tests.txt"
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
gpu tl_nodma STRATA_TIERS_TIMELINE=60 -- -p 0 -n 128 -r 1 --expert-slots 0 --expert-prefetch 0 --miss-lane cpu
gpu tl_base STRATA_TIERS_TIMELINE=60 -- -p 0 -n 128 -r 1 --expert-slots 0
gpu prof_ram X=1 -- -p 0 -n 64 -r 1 --expert-slots 0 --gpu-profile
gpu prof_nodma X=1 -- -p 0 -n 64 -r 1 --expert-slots 0 --gpu-profile --expert-prefetch 0 --miss-lane cpu
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
