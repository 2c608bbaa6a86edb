#!/usr/bin/env bash
# The server on the GPU under 1, 4 and 16 concurrent clients (`strata loadgen`, 4 requests each,
# 64 tokens), with the BENCHMARKS.md synthetic Qwen3-30B-A3B all in VRAM and with a 10 GiB budget
# (expert tiers). The server fuses its active sequences into one forward pass per step.
# Logs go to OUT_DIR. Usage: scripts/device_server_load.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

model=/tmp/strata-synth-${layers}l.gguf
synth_model
serve_load vram
serve_load budget10 --vram-budget 10GiB
rm -f "$model"
