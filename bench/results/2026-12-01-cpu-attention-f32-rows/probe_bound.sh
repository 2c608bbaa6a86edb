#!/usr/bin/env bash
# Issue 4: the bandwidth probe with software prefetch windows on 16 Xeon threads: the probe's
# loops side by side (memory_bandwidth_bench), then CPU decode of the 8-layer synthetic
# Qwen3-30B-A3B against the new bound (three runs of tg64, 3 repetitions each).
source "$(dirname "$0")/device_common.sh" "$@"
step probe_bench 120 "$bin/memory_bandwidth_bench" --benchmark_filter='threads:16' --benchmark_min_time=0.5
grep -E "probe/" "$out/probe_bench.txt"
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
cat "$model" > /dev/null
for r in 1 2 3; do
  step "tg_r$r" 300 "$bin/strata" bench -m "$model" --device cpu -p 0 -n 64 -r 3
  grep -E "DRAM|tg64|beside" "$out/tg_r$r.txt"
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
