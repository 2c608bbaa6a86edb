#!/usr/bin/env bash
# Issue 9: the next layer's router queued behind the routing's trip to the host (default) against
# before it (STRATA_TIERS_PREDICT_FIRST=1); every expert in RAM, tg128, alternated, 3 rounds. Then
# the GPU suite, tier parity, and how concentrated the synthetic model's routing is (strata profile).
source "$(dirname "$0")/device_common.sh" "$@"
step smoke 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/qwen3moe.gguf" --ref "$data/models/qwen3moe.ref.gguf"
tail -5 "$out/smoke.txt"
grep -q PASS "$out/smoke.txt" || exit 1
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu -p 0 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2 3; do
  gpu after_r$r X=1 -- -n 128 -r 2 --expert-slots 0
  gpu first_r$r STRATA_TIERS_PREDICT_FIRST=1 -- -n 128 -r 2 --expert-slots 0
done
gpu b2g X=1 -- -n 128 -r 2 --vram-budget 2GiB
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
for m in qwen3moe deepseek3 gptoss; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error|nmse|NMSE" "$out/parity_tiny_$m.txt" | head -4
done
