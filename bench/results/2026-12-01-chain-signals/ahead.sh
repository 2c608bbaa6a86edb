#!/usr/bin/env bash
# Issue 9: the copies ahead chosen by the balance of experts/copies_ahead.h (default) against a
# fixed count (STRATA_TIERS_AHEAD=fixed with --expert-prefetch N), alternated, 2 rounds, at
# 10 GiB, 16 GiB and with every expert in RAM; the GPU suite and parity with 2 slots first.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2; do
  bench_env b10_auto_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  bench_env b10_fixed3_r$r STRATA_TIERS_AHEAD=fixed -- -p 0 -n 128 -r 2 --vram-budget 10GiB --expert-prefetch 3
  bench_env b10_fixed2_r$r STRATA_TIERS_AHEAD=fixed -- -p 0 -n 128 -r 2 --vram-budget 10GiB --expert-prefetch 2
  bench_env b16_auto_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 16GiB
  bench_env b16_fixed2_r$r STRATA_TIERS_AHEAD=fixed -- -p 0 -n 128 -r 2 --vram-budget 16GiB --expert-prefetch 2
  bench_env b16_fixed3_r$r STRATA_TIERS_AHEAD=fixed -- -p 0 -n 128 -r 2 --vram-budget 16GiB --expert-prefetch 3
  bench_env ram_auto_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env ram_fixed3_r$r STRATA_TIERS_AHEAD=fixed -- -p 0 -n 128 -r 2 --expert-slots 0 --expert-prefetch 3
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
