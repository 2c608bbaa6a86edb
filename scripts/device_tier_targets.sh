#!/usr/bin/env bash
# The measurements issues 5 and 9 ask for that the other scripts leave out, on the BENCHMARKS.md
# synthetic Qwen3-30B-A3B: pp4096 with every expert in RAM (batch and ubatch 4096), a 16 GiB
# budget (pp512, tg64), and tg128 at depth 8192 all in VRAM.
# Logs go to OUT_DIR. Usage: scripts/device_tier_targets.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench ram_pp4096 -p 4096 -b 4096 -n 0 -r 1 --expert-slots 0
bench budget16 -p 512 -n 64 -r 2 --vram-budget 16GiB
bench vram_depth8192 -p 0 -n 128 -r 2 -d 8192
rm -f "$model"
