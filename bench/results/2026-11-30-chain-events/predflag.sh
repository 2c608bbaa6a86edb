#!/usr/bin/env bash
# Issue 9: the next layer's prediction reaches the host by a flag too (commit after 2700c55): a
# 10 GiB budget and every expert in RAM, tg128, alternated with both events (as before 2700c55).
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
step gpu_tests_sel 300 "$bin/strata_gpu_tests" --gtest_filter='GpuFused.*:*GpuExpertTiers*:*Prefetch*'
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
for r in 1 2 3; do
  gpu b10_new_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  gpu b10_old_r$r STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine -- -p 0 -n 128 -r 2 --vram-budget 10GiB
done
for r in 1 2; do
  gpu ram_new_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu ram_old_r$r STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine -- -p 0 -n 128 -r 2 --expert-slots 0
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
