#!/usr/bin/env bash
# Issue 9, decode: the combine polling the CPU lane's counter itself (default now) against a wait
# kernel before it (STRATA_TIERS_FUSED_WAIT=0), every expert in RAM (3 rounds) and 10 GiB (2),
# alternated; one decode step's timeline; prompts once; then the GPU suite.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
gpu tl_ram STRATA_TIERS_TIMELINE=60 -- -p 0 -n 128 -r 1 --expert-slots 0
for r in 1 2 3; do
  gpu fused_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu kernel_r$r STRATA_TIERS_FUSED_WAIT=0 -- -p 0 -n 128 -r 2 --expert-slots 0
done
for r in 1 2; do
  gpu fused10_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  gpu kernel10_r$r STRATA_TIERS_FUSED_WAIT=0 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
done
gpu pp10 X=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
gpu ppram X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
