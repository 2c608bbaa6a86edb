#!/usr/bin/env bash
# Issue 38 on the GPU machine. (1) The odd-width grid (tests/support/odd_shapes.h) resident against
# the CPU and tiered with one slot (each miss lane) against resident, and the narrow-FFN tiers
# test: tests/gpu/odd_shapes_gpu_test.cpp, tests/gpu/expert_tiers_narrow_ffn_test.cpp. (2) Decode
# beside a CPU burner (burner.sh, in this folder) keeping 0, 4, 8 and 12 cores busy, with the
# synthetic Qwen3-30B-A3B and a 10 GiB VRAM budget (the CPU lane computes the misses): `bench`
# tg64 with --threads auto (the default: one thread per free CPU), auto with --spin-backoff (pool
# threads stop polling after 8 polls in a row ran out), and the former default (15 threads on 16
# cores), alternated in each round.
# Usage (repo root on the device): bench/results/2026-12-07-cpu-contention/device.sh OUT BIN TESTDATA [LAYERS]
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/device_common.sh" "$@"
step gpu_odd_shapes 540 "$bin/strata_gpu_tests" --gtest_filter='*OddShapes*:*NarrowFfn*'
tail -3 "$out/gpu_odd_shapes.txt"; grep -E "FAILED|Failure|internal error" "$out/gpu_odd_shapes.txt" | head -20

model=/tmp/strata-contention.gguf
synth_model
cores=$(nproc)
for round in 1 2; do
  for busy in 0 4 8 12; do
    burner=""
    if (( busy > 0 )); then "$here/burner.sh" "$busy" 900 & burner=$!; sleep 1; fi
    for variant in "auto" "auto --spin-backoff" "$((cores - 1))"; do
      read -r -a flags <<< "-t $variant"
      bench_line "tg_busy${busy}_t${variant// /}_r$round" --device gpu --vram-budget 10GiB -p 0 -n 64 -r 3 --no-bound "${flags[@]}"
    done
    if [[ -n $burner ]]; then kill "$burner"; wait "$burner" 2> /dev/null; fi
  done
done
grep -h "threads auto" "$out"/tg_busy*_tauto_r1.txt
