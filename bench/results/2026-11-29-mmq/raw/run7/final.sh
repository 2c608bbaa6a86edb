#!/usr/bin/env bash
# Final check of the session's code: GPU tests, then pp512/pp4096 and tg128 in one bench.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 300 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|gpu-quantized" "$out/gpu_tests.txt" | head
model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench final -p 512,4096 -n 128 -b 4096 -r 3
rm -f "$model"
