#!/usr/bin/env bash
# Issue 9: how many experts a decode step copies ahead (--expert-prefetch), with the uniform
# synthetic model, at 10 GiB and with every expert in RAM; alternated, 2 rounds.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2; do
  for n in 1 2 3 4; do
    bench_env b10_p${n}_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB --expert-prefetch $n
  done
  for n in 2 3 4; do
    bench_env ram_p${n}_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0 --expert-prefetch $n
  done
  bench_env b16_p2_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 16GiB --expert-prefetch 2
  bench_env b16_p3_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 16GiB --expert-prefetch 3
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
