#!/usr/bin/env bash
# Issue 9, the final code: the decode split's bias (default 3 against 1, 5 and 8 through
# STRATA_TIERS_SHARE_BIAS), every expert in RAM, tg128, alternated, 3 rounds; the 2 and 10 GiB
# budgets; then the GPU suite and `strata parity --device gpu` on every fixture, and with 2 slots.
source "$(dirname "$0")/device_common.sh" "$@"
step smoke 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/qwen3moe.gguf" --ref "$data/models/qwen3moe.ref.gguf"
grep -q PASS "$out/smoke.txt" || { cat "$out/smoke.txt"; exit 1; }
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
  gpu b3_r$r X=1 -- -n 128 -r 2 --expert-slots 0
  gpu b1_r$r STRATA_TIERS_SHARE_BIAS=1 -- -n 128 -r 2 --expert-slots 0
  gpu b5_r$r STRATA_TIERS_SHARE_BIAS=5 -- -n 128 -r 2 --expert-slots 0
  gpu b8_r$r STRATA_TIERS_SHARE_BIAS=8 -- -n 128 -r 2 --expert-slots 0
done
gpu b3_2g X=1 -- -n 128 -r 2 --vram-budget 2GiB
gpu b3_10g X=1 -- -n 128 -r 2 --vram-budget 10GiB
gpu b3_pp X=1 -- -p 512 -n 0 -r 2 --expert-slots 0
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
