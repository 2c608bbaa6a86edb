#!/usr/bin/env bash
# Issue 9: the decode step's chain without its two events (routing by a flag the host polls, the
# step's end recorded before the wait for the CPU lane), alternated with the old placement.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
step gpu_tests_sel 300 "$bin/strata_gpu_tests" --gtest_filter='GpuFused.*:GpuOpProfiler*:*GpuExpertTiers*'
tail -3 "$out/gpu_tests_sel.txt"; grep -E "FAILED" "$out/gpu_tests_sel.txt" | head
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
gpu tl_new STRATA_TIERS_TIMELINE=60 -- -p 0 -n 128 -r 1 --expert-slots 0
for r in 1 2 3; do
  gpu new_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu old_r$r STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu flag_r$r STRATA_TIERS_STEP_DONE=combine -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu done_r$r STRATA_TIERS_ROUTING_FLAG=0 -- -p 0 -n 128 -r 2 --expert-slots 0
done
gpu b10_new X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu b10_old STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine -- -p 512 -n 128 -r 2 --vram-budget 10GiB
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
