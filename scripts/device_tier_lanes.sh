#!/usr/bin/env bash
# The expert tiers' decode lanes on a GPU machine: the tier and parity GPU tests, then the
# BENCHMARKS.md synthetic Qwen3-30B-A3B with every expert in RAM (tg64 per miss lane) and with a
# 10 GiB budget, each with the CPU lane on its own thread overlapping the GPU part's queueing
# (default) and run after it (STRATA_TIERS_SERIAL_CPU=1), the CPU pool sleeping at once or
# polling (--spin-us 500), alternating so that the A/B pairs share the machine's state.
# Logs go to OUT_DIR. Usage: scripts/device_tier_lanes.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 300 "$bin/strata_gpu_tests" --gtest_filter='*Tiers*:*Parity*:*Sequences*:*HybridState*'
grep -E "FAILED|PASSED|over the limit" "$out/gpu_tests.txt" | head -20

model=/tmp/strata-synth-${layers}l.gguf
step synth 300 "$bin/strata" synth --preset qwen3-30b-a3b --layers "$layers" --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o "$model"
bench() {  # name args...
  local name=$1; shift
  step "bench_$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  grep -E "tg|pp|experts:" "$out/bench_$name.txt" | head -6
}
for spin in 0 500; do
  for round in 1 2; do
    bench "ram_auto_spin${spin}_overlap_$round" -p 0 -n 64 -r 2 --expert-slots 0 --spin-us "$spin"
    STRATA_TIERS_SERIAL_CPU=1 bench "ram_auto_spin${spin}_serial_$round" -p 0 -n 64 -r 2 --expert-slots 0 --spin-us "$spin"
  done
done
bench ram_cpu_spin500_overlap -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane cpu --spin-us 500
STRATA_TIERS_SERIAL_CPU=1 bench ram_cpu_spin500_serial -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane cpu --spin-us 500
bench budget10_spin500_overlap -p 512 -n 64 -r 2 --vram-budget 10GiB --spin-us 500
STRATA_TIERS_SERIAL_CPU=1 bench budget10_spin500_serial -p 512 -n 64 -r 2 --vram-budget 10GiB --spin-us 500
bench ram_pp -p 512 -n 0 -r 2 --expert-slots 0 --spin-us 500
rm -f "$model"
