#!/usr/bin/env bash
# Issue 9: did this session's changes move pp512 with every expert in RAM? 28ca13d against its
# switches (the step's end after the combine; a 2 KiB window; both), alternated.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2 3; do
  bench_env pp_new_r$r X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  bench_env pp_stepdone_r$r STRATA_TIERS_STEP_DONE=combine -- -p 512 -n 0 -r 3 --expert-slots 0
  bench_env pp_w2048_r$r STRATA_CPU_PREFETCH_BYTES=2048 -- -p 512 -n 0 -r 3 --expert-slots 0
  bench_env pp_old_r$r STRATA_TIERS_STEP_DONE=combine STRATA_CPU_PREFETCH_BYTES=2048 -- -p 512 -n 0 -r 3 --expert-slots 0
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
