#!/usr/bin/env bash
# Issue 9, the last code (prompt steps record their end after the combine again; the 4 KiB window
# for one-token products only): the tiers' GPU tests, then pp512 and tg128 with every expert in
# RAM against the previous session's behaviour (switches), alternated.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
step gpu_tests_sel 300 "$bin/strata_gpu_tests" --gtest_filter='GpuFused.*:*GpuExpertTiers*:*Prefetch*:GpuOpProfiler*'
tail -3 "$out/gpu_tests_sel.txt"; grep -E "FAILED" "$out/gpu_tests_sel.txt" | head
synth_model
cat "$model" > /dev/null
old=(STRATA_TIERS_ROUTING_FLAG=0 STRATA_TIERS_STEP_DONE=combine STRATA_CPU_PREFETCH_BYTES=2048)
for r in 1 2; do
  bench_env pp_new_r$r X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  bench_env pp_old_r$r "${old[@]}" -- -p 512 -n 0 -r 3 --expert-slots 0
done
for r in 1 2; do
  bench_env tg_new_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env tg_old_r$r "${old[@]}" -- -p 0 -n 128 -r 2 --expert-slots 0
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
