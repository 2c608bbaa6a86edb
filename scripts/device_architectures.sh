#!/usr/bin/env bash
# Every architecture on the GPU, and the weight types, in one go on a GPU machine: the GPU tests
# (op parity incl. every weight type and the DeltaNet ops, model parity on every fixture, layer
# splits, expert tiers, interleaved recurrent states), `strata parity --device gpu` on every
# fixture, then the BENCHMARKS.md synthetic Qwen3-30B-A3B: all in VRAM (pp512, tg128: the shared
# GPU forward must not have slowed), and all experts in RAM (tg64 per miss lane, with the CPU
# pool's threads sleeping at once and polling first, --spin-us) with the tiers' time split.
# Logs go to OUT_DIR. Usage: scripts/device_architectures.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED" "$out/gpu_tests.txt" | head -30
grep -E "gpu-parity|gpu-tiers|gpu-split" "$out/gpu_tests.txt" | head -60
parity_fixtures

model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench vram -p 512 -n 128 -r 3
for spin in 0 500; do
  bench "ram_auto_spin$spin" -p 0 -n 64 -r 2 --expert-slots 0 --spin-us "$spin"
  bench "ram_cpu_spin$spin" -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane cpu --spin-us "$spin"
done
bench ram_stream -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane stream
rm -f "$model"
