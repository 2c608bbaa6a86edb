#!/usr/bin/env bash
# Issue 4: where the Xeon's CPU prompt time goes (strata bench --cpu-profile), at 4 and 16
# threads, for pp512 on the 8-layer synthetic model; and decode (tg32) at 16 threads.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
for t in 16 4; do
  step cpu_prof_t$t 300 "$bin/strata" bench -m "$model" --device cpu -t $t -p 512 -n 32 -r 1 --cpu-profile
  grep -E "^\|" "$out/cpu_prof_t$t.txt"
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
