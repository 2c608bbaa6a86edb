#!/usr/bin/env bash
# Issues 4 and 9: tiles for a job's first tokens too (streaming its rows), against tiles for the
# later tokens only (STRATA_CPU_TILES=cached), alternated: CPU prompts of 2-512 tokens (8 layers),
# and the GPU tiers' prompts (every expert in RAM, 10 GiB). Also: whether perf runs here, and
# where a CPU prompt's time goes if it does.
source "$(dirname "$0")/device_common.sh" "$@"
step model_tests 300 "$bin/strata_model_tests"
tail -1 "$out/model_tests.txt"
step backend_tests 300 "$bin/strata_backend_tests"
tail -1 "$out/backend_tests.txt"
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
for r in 1 2; do
  for v in 1 cached; do
    step cpu_${v}_r$r 300 env STRATA_CPU_TILES=$v "$bin/strata" bench -m "$model" --device cpu -p 2,4,16,64,512 -n 0 -r 2
    echo "cpu_${v}_r$r: $(grep -E '\| *pp[0-9]' "$out/cpu_${v}_r$r.txt" | awk -F'|' '{printf "%s %s;", $2, $3}')"
  done
done
if command -v perf > /dev/null; then
  step perf_record 120 perf record -g -o /tmp/perf.data "$bin/strata" bench -m "$model" --device cpu -p 512 -n 0 -r 1
  tail -3 "$out/perf_record.txt"
  perf report -i /tmp/perf.data --no-children --sort symbol 2> /dev/null | grep -v '^#' | grep '%' | cut -c1-160 | head -40 > "$out/perf_report.txt"
  head -25 "$out/perf_report.txt"
else
  echo "no perf on this machine" | tee "$out/perf_report.txt"
fi
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2 3; do
  bench_env ram_all_r$r STRATA_CPU_TILES=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  bench_env ram_cached_r$r STRATA_CPU_TILES=cached -- -p 512 -n 0 -r 3 --expert-slots 0
done
for r in 1 2; do
  bench_env b10_all_r$r STRATA_CPU_TILES=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
  bench_env b10_cached_r$r STRATA_CPU_TILES=cached -- -p 512 -n 128 -r 2 --vram-budget 10GiB
done
bench_env ram_tg X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
