#!/usr/bin/env bash
# Issue 31, after one SwiGLU FFN helper took the place of the dense FFN's and the two shared
# experts' copies (GpuTransformer::swiglu_ffn): everything device.sh checks, and tiered parity
# with the CPU miss lane fixed, to be compared digit for digit with raw/lanes/tiny_cpu_*_new.txt.
# Usage (repo root on the device): bench/results/2026-12-02-engine-reshape/ffn.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
parity_fixtures
tiered_parity_fixtures
cpu_parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "tiny_cpu_${m}_new" 120 "$bin/strata" parity --device gpu --expert-slots 2 --miss-lane cpu \
    -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
done
step gpu_tests 480 "$bin/strata_gpu_tests"
tail -2 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head
