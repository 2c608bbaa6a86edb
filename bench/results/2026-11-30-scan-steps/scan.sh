#!/usr/bin/env bash
# Issue 9, prompts with experts off the GPU: scan steps (experts/scan_steps.h), which copy the next
# layer's experts ahead of its routing and leave the cache policy alone. Alternated rounds, pp512:
# new (default); old (STRATA_TIERS_STREAM_AHEAD=0 STRATA_TIERS_SCAN_ADMIT=1); copies ahead only
# (STRATA_TIERS_SCAN_ADMIT=1); no admission only (STRATA_TIERS_STREAM_AHEAD=0); with a 10 GiB
# budget and with every expert in RAM. Then pp4096, tg128 after a prompt, the GPU suite and tier
# parity with 2 slots.
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
old=(STRATA_TIERS_STREAM_AHEAD=0 STRATA_TIERS_SCAN_ADMIT=1)
for r in 1 2; do
  gpu new10_r$r X=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu old10_r$r "${old[@]}" -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu ahead10_r$r STRATA_TIERS_SCAN_ADMIT=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu noadmit10_r$r STRATA_TIERS_STREAM_AHEAD=0 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu newram_r$r X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  gpu oldram_r$r "${old[@]}" -- -p 512 -n 0 -r 3 --expert-slots 0
done
gpu new10_tg X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu old10_tg "${old[@]}" -- -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu newram_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
gpu oldram_4096 "${old[@]}" -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
gpu new10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
