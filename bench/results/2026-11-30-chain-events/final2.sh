#!/usr/bin/env bash
# Issues 9 and 4, the session's last code (28ca13d) on one start: the GPU suite, parity on every
# fixture (and with 2 expert slots), every scenario of the README's table, then alternated rounds
# against the previous session's behaviour where switches give it back (both events in the chain,
# a 2 KiB prefetch window): every expert in RAM and a 10 GiB budget, tg128.
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
old=(STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine STRATA_CPU_PREFETCH_BYTES=2048)
bench_env vram X=1 -- -p 512 -n 128 -r 2
bench_env vram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2
bench_env b16 X=1 -- -p 512 -n 128 -r 2 --vram-budget 16GiB
bench_env b10 X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
bench_env b10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
bench_env b2 X=1 -- -p 512 -n 128 -r 2 --vram-budget 2GiB
bench_env ram X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
bench_env ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
for r in 1 2 3; do
  bench_env ram_new_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env ram_old_r$r "${old[@]}" -- -p 0 -n 128 -r 2 --expert-slots 0
done
for r in 1 2; do
  bench_env b10_new_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  bench_env b10_old_r$r "${old[@]}" -- -p 0 -n 128 -r 2 --vram-budget 10GiB
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
