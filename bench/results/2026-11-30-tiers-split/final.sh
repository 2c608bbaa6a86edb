#!/usr/bin/env bash
# Issues 4 and 9, the session's last code: the GPU suite, the quant and model tests (the AVX-512
# tiles' bits, Q2_K and Q3_K included), parity on every fixture (and with 2 expert slots), the
# Q2_K/Q3_K tiles in L2, every scenario of the README's table, and a look at decode's chain:
# empty launches added after every op (STRATA_GPU_EXTRA_LAUNCHES, a timing study) and the ops
# of one tiered decode token (--gpu-profile).
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
step quant_tests 300 "$bin/strata_quant_tests"
grep -E "^\[  (PASSED|FAILED)" "$out/quant_tests.txt" | head -5
step model_tests 300 "$bin/strata_model_tests"
tail -1 "$out/model_tests.txt"
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
step dot_rows 300 "$bin/dot_rows_bench" --benchmark_filter='Q[23]_K/avx512/(rows_x4|tile_x4)/4k/(64KiB|1MiB)' \
  --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
grep median "$out/dot_rows.txt"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
bench_env vram X=1 -- -p 512 -n 128 -r 2
bench_env vram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2
bench_env b16 X=1 -- -p 512 -n 128 -r 2 --vram-budget 16GiB
bench_env b10 X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
bench_env b10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
bench_env b2 X=1 -- -p 512 -n 128 -r 2 --vram-budget 2GiB
bench_env ram X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
bench_env ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
for r in 1 2; do
  bench_env ram_extra0_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env ram_extra2_r$r STRATA_GPU_EXTRA_LAUNCHES=2 -- -p 0 -n 128 -r 2 --expert-slots 0
done
bench_env ram_profile X=1 -- -p 0 -n 32 -r 1 --expert-slots 0 --gpu-profile
tail -40 "$out/ram_profile.txt"
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
