#!/usr/bin/env bash
# Issue 9: decode's routing up and the CPU lane's sum down as tagged words (no fence, no flag,
# no second read) against the flag and counter (STRATA_TIERS_TAGGED=0), alternated; the GPU
# suite and parity (with 2 expert slots: most experts miss, decode takes the tagged path) first.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED|Tagged" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2 3; do
  bench_env ram_tagged_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env ram_flag_r$r STRATA_TIERS_TAGGED=0 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env b10_tagged_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  bench_env b10_flag_r$r STRATA_TIERS_TAGGED=0 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
done
bench_env ram_pp X=1 -- -p 512 -n 0 -r 2 --expert-slots 0
tar -C "$out" -czf TMP . && rm -f "$out"/*.txt && mv TMP "$out/"
