#!/usr/bin/env bash
# Issues 9 and 4, the session's code on one start: the GPU suite, parity on every fixture (and with
# 2 expert slots), every scenario of the README's table, then alternated A/B rounds: the chain's
# events (new against STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine, every expert in
# RAM; and without the link clock's events) and the CPU matmul's prefetch window (4096 against 2048, 16-thread CPU decode, 8 layers).
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -8 | tr '\n' ' ')"
}
gpu vram X=1 -- -p 512 -n 128 -r 2
gpu vram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2
gpu b16 X=1 -- -p 512 -n 128 -r 2 --vram-budget 16GiB
gpu b10 X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu b10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
gpu b2 X=1 -- -p 512 -n 128 -r 2 --vram-budget 2GiB
gpu ram X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
gpu ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
for r in 1 2 3; do
  gpu new_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu old_r$r STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu noclock_r$r STRATA_TIERS_LINK_CLOCK=0 -- -p 0 -n 128 -r 2 --expert-slots 0
done
gpu b10_new X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
gpu b10_old STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine -- -p 0 -n 128 -r 2 --vram-budget 10GiB
step synth8 120 "$bin/strata" synth --preset qwen3-30b-a3b --layers 8 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o /tmp/s8.gguf
cat /tmp/s8.gguf > /dev/null
for r in 1 2 3; do
  for w in 4096 2048; do
    step cpu_w${w}_r$r 120 env STRATA_CPU_PREFETCH_BYTES=$w "$bin/strata" bench -m /tmp/s8.gguf --device cpu -p 0 -n 64 -r 3
    echo "cpu_w${w}_r$r: $(grep -E '^\|.*tg[0-9]' "$out/cpu_w${w}_r$r.txt" | tr -s ' ')"
  done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
