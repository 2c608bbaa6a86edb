#!/usr/bin/env bash
# Issue 31 on the device after the reshape (KV type, architecture table, GPU forward passes moved
# to model/gpu/, policy and lane enums, tuning passed in): GPU parity of every fixture against HF's
# logits, tiered parity with 2 expert slots on the MoE fixtures, CPU parity of every fixture — to
# be compared digit for digit with the last run before it (2026-12-01-cpu-attention-groups,
# raw/device_final) — then the whole GPU test suite.
# Usage (repo root on the device): bench/results/2026-12-02-engine-reshape/device.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
  step "parity_cpu_$m" 120 "$bin/strata" parity --device cpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "FAIL|error" "$out/parity_cpu_$m.txt" | head -4
done
step gpu_tests 480 "$bin/strata_gpu_tests"
tail -2 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head
