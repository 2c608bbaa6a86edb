#!/usr/bin/env bash
# The q8_0 KV cache on the GPU: the GPU suite (its op-parity case against the CPU's q8_0 cache),
# `strata parity --device gpu --kv-type q8_0` of every fixture (deepseek2 is refused by design;
# heads that are not whole 32-value blocks are refused), then tg128 at depth 8192, f16 against
# q8_0, on an 8-layer synthetic Qwen3-30B-A3B.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -8
grep -E "q8_0 heads" "$out/gpu_tests.txt" | head -14
for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
  step "q8_parity_$m" 120 "$bin/strata" parity --device gpu --kv-type q8_0 --max-nmse 3e-4 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  echo "$m: $(grep -E "PASS|FAIL|rror" "$out/q8_parity_$m.txt" | tr -s ' ' | head -3 | tr '\n' ' ')"
done
model=/tmp/strata-synth-8l.gguf
layers=8
synth_model
for round in 1 2; do
  for kv in f16 q8_0; do
    name="d8192_${kv}_r$round"
    step "$name" 120 "$bin/strata" bench -m "$model" --device gpu --kv-type "$kv" -p 0 -n 128 -d 8192 -r 2
    echo "$name: $(grep -E 'tg128|KV' "$out/$name.txt" | tr -s ' ' | head -2 | tr '\n' ' ')"
  done
done
