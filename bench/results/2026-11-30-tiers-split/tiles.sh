#!/usr/bin/env bash
# Issues 4 and 9: the CPU matmul's tile kernels (four tokens against a row in cache) on the
# device's Xeon (AVX-512 VNNI). The quant and model tests (the AVX-512 tiles' bits against the
# single-row kernel), the kernels in L2, then tiles against STRATA_CPU_TILES=0 alternated: CPU
# prompt processing of the 8-layer synthetic model, and the GPU tiers' prompts with every expert
# in RAM and with a 10 GiB budget (the CPU lane takes a share of the prompt's experts).
source "$(dirname "$0")/device_common.sh" "$@"
step quant_tests 300 "$bin/strata_quant_tests"
tail -3 "$out/quant_tests.txt"; grep -E "FAILED|CpuRowsKernel.Tile.*OK" "$out/quant_tests.txt" | head
step model_tests 300 "$bin/strata_model_tests"
tail -2 "$out/model_tests.txt"
step dot_rows 300 "$bin/dot_rows_bench" --benchmark_filter='(rows_x4|tile_x4)/4k/(64KiB|1MiB)' --benchmark_min_time=0.2 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
grep median "$out/dot_rows.txt"
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
for t in 4 8; do
  step cpu_t$t 300 "$bin/strata" bench -m "$model" --device cpu -t $t -p 512 -n 0 -r 2
  echo "cpu_t$t: $(grep pp512 "$out/cpu_t$t.txt")"
done
for r in 1 2 3; do
  step cpu_tiles_r$r 300 "$bin/strata" bench -m "$model" --device cpu -p 512 -n 0 -r 2
  echo "cpu_tiles_r$r: $(grep pp512 "$out/cpu_tiles_r$r.txt")"
  step cpu_notiles_r$r 300 env STRATA_CPU_TILES=0 "$bin/strata" bench -m "$model" --device cpu -p 512 -n 0 -r 2
  echo "cpu_notiles_r$r: $(grep pp512 "$out/cpu_notiles_r$r.txt")"
done
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2 3; do
  bench_env ram_tiles_r$r X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  bench_env ram_notiles_r$r STRATA_CPU_TILES=0 -- -p 512 -n 0 -r 3 --expert-slots 0
done
for r in 1 2; do
  bench_env b10_tiles_r$r X=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  bench_env b10_notiles_r$r STRATA_CPU_TILES=0 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
done
bench_env ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
