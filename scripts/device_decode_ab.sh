#!/usr/bin/env bash
# Two builds of Strata against each other in one run on a GPU machine: BIN_DIR/strata_a (before)
# and BIN_DIR/strata (after) on the BENCHMARKS.md synthetic Qwen3-30B-A3B, all in VRAM: pp512 with
# tg128, and tg128 at depth 8192, each build twice in alternation so that drift shows; the GPU tests
# of the new build first. Logs go to OUT_DIR.
# Usage: scripts/device_decode_ab.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED" "$out/gpu_tests.txt" | head -20

model=/tmp/strata-synth-${layers}l.gguf
synth_model
for round in 1 2; do
  for exe in strata_a strata; do
    step "bench_${exe}_$round" 300 "$bin/$exe" bench -m "$model" --device gpu -p 512 -n 128 -r 3
    step "bench_${exe}_d8192_$round" 300 "$bin/$exe" bench -m "$model" --device gpu -p 0 -n 128 -d 8192 -r 2
    grep -hE "pp|tg" "$out/bench_${exe}_$round.txt" "$out/bench_${exe}_d8192_$round.txt" | sed "s/^/$exe: /"
  done
done
rm -f "$model"
