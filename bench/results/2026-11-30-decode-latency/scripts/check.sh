#!/usr/bin/env bash
# Session 9 first run: the whole GPU suite and parity (the miss-lane extraction, the 64 KB limit on
# mapped transfers, the heat order and the fixture base have not run on a GPU), then the skewed
# 10 GiB decode that lost hit rate in the last session (coldest misses to the CPU since).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|CUDA failed" "$out/gpu_tests.txt" | head -12
parity_fixtures
for m in qwen3moe mixtral gptoss qwen3next deepseek3; do
  step "parity_tiny_$m" 180 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error|nmse" "$out/parity_tiny_$m.txt" | head -4
done
model=/tmp/strata-synth-48l.gguf
synth_model --router-skew 1.0
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*experts://')"
}
for round in 1 2; do
  for pf in 0 2; do run "skew_b10_pf${pf}_r$round" -p 0 -n 64 -r 3 --vram-budget 10GiB --expert-prefetch $pf; done
done
run skew_b10_pp512 -p 512 -n 0 -r 2 --vram-budget 10GiB
run skew_ram -p 0 -n 64 -r 3 --expert-slots 0
