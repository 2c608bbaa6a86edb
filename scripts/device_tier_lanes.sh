#!/usr/bin/env bash
# The expert tiers' decode lanes on a GPU machine: the tier and parity GPU tests, then the
# BENCHMARKS.md synthetic Qwen3-30B-A3B with every expert in RAM (tg64 per miss lane) and with a
# 10 GiB budget, the CPU pool sleeping at once (--spin-us 0) and polling (the default on 8+
# hardware threads), alternating so that the A/B pairs share the machine's state. (Run 5 of
# bench/results/2026-11-29-architectures-gpu also compared a CPU lane overlapping the GPU part's
# queueing, through a switch that was removed with that code.)
# Logs go to OUT_DIR. Usage: scripts/device_tier_lanes.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 300 "$bin/strata_gpu_tests" --gtest_filter='*Tiers*:*Parity*:*Sequences*:*HybridState*'
grep -E "FAILED|PASSED|over the limit" "$out/gpu_tests.txt" | head -20

model=/tmp/strata-synth-${layers}l.gguf
synth_model
for round in 1 2; do
  for spin in 0 -1; do
    bench "ram_auto_spin${spin}_$round" -p 0 -n 64 -r 2 --expert-slots 0 --spin-us "$spin"
    bench "ram_cpu_spin${spin}_$round" -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane cpu --spin-us "$spin"
  done
done
bench ram_stream -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane stream
bench budget10 -p 512 -n 64 -r 2 --vram-budget 10GiB
bench ram_pp -p 512 -n 0 -r 2 --expert-slots 0
rm -f "$model"
