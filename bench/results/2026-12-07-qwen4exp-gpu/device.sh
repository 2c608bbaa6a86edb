#!/usr/bin/env bash
# Issue 33, item 3: qwen4exp (Qwen3.8-Flash-Next) on the GPU. The project's fixture
# (tests/model/data/qwen4exp, HF transformers' logits) through `strata parity --device gpu` as one
# batch and token by token, with every expert resident and tiered (1 and 2 expert slots, each miss
# lane), with the KV cache in f16 and f32; then the other fixtures' GPU and tiered parity (the
# hybrid blocks qwen3next/qwen35moe share with qwen4exp moved to model/gpu/gpu_hybrid_blocks.cpp,
# and the attention rows kernel took a key selection), and the whole GPU suite (op parity of the
# new ops included).
# Usage (repo root on the device): bench/results/2026-12-07-qwen4exp-gpu/device.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
export STRATA_SOURCE_DIR=$PWD  # the project's fixtures for the test binaries
q=tests/model/data/qwen4exp
for kv in f16 f32; do
  step "parity_qwen4exp_$kv" 120 "$bin/strata" parity --device gpu --kv-type "$kv" -m "$q.gguf" --ref "$q.ref.gguf"
  grep -E "PASS|FAIL|error|nmse" "$out/parity_qwen4exp_$kv.txt" | head -6
done
for slots in 1 2; do
  for lane in auto cpu stream; do
    step "parity_qwen4exp_slots${slots}_$lane" 120 "$bin/strata" parity --device gpu --expert-slots "$slots" \
      --miss-lane "$lane" -m "$q.gguf" --ref "$q.ref.gguf"
    grep -E "PASS|FAIL|error|nmse|expert uses" "$out/parity_qwen4exp_slots${slots}_$lane.txt" | head -6
  done
done
step parity_cpu_qwen4exp 120 "$bin/strata" parity --device cpu -m "$q.gguf" --ref "$q.ref.gguf"
grep -E "FAIL|error|nmse" "$out/parity_cpu_qwen4exp.txt" | head -4
parity_fixtures
tiered_parity_fixtures
step gpu_tests 540 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head -20
grep -E "op-parity .*(hc_|qsa|ple_|grouped)" "$out/gpu_tests.txt" | grep -v " ok$" | head
