#!/usr/bin/env bash
# Issue 4: CPU attention with the heads of a kv-head group sharing each block of rows, and the
# f16 dot kernel finishing eight rows at once (new, BIN/strata), against the code before
# (BIN/strata-base, with the matmul's prefetches), alternated on 16 Xeon threads: decode at a
# depth of 4096 and at 0, and a 4096-token prompt; the CPU suites on the new build.
source "$(dirname "$0")/device_common.sh" "$@"
for s in backend model; do
  step "${s}_tests" 300 "$bin/strata_${s}_tests"
  tail -1 "$out/${s}_tests.txt"
done
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
cat "$model" > /dev/null
cpu() {  # name exe args...
  local name=$1 exe=$2; shift 2
  step "$name" 300 "$bin/$exe" bench -m "$model" --device cpu "$@"
  echo "$name: $(grep -E 'beside|^\|.*(tg|pp)[0-9]|attention \(' "$out/$name.txt" | tr -s ' ' | head -4 | tr '\n' ' ')"
}
for r in 1 2; do
  cpu d4096_new_r$r strata -p 0 -n 32 -r 2 -d 4096 --cpu-profile
  cpu d4096_base_r$r strata-base -p 0 -n 32 -r 2 -d 4096 --cpu-profile
done
for r in 1 2; do
  cpu pp4096_new_r$r strata -p 4096 -b 4096 -n 0 -r 1
  cpu pp4096_base_r$r strata-base -p 4096 -b 4096 -n 0 -r 1
  cpu tg_new_r$r strata -p 0 -n 64 -r 3
  cpu tg_base_r$r strata-base -p 0 -n 64 -r 3
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
