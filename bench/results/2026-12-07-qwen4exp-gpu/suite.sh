#!/usr/bin/env bash
# Issue 33, after device.sh: the whole GPU suite (its first run stopped at an op-parity case that
# asked gpu_matmul for f32 rows of 7 values, which no kernel takes: the test's shape, not the
# model's), and qwen4exp's GPU parity with the n-gram table read from the disk (--ple-table ssd,
# O_DIRECT) and from RAM, which must give the digits of the mapped table. Logs go into one tar.
# Usage (repo root on the device): bench/results/2026-12-07-qwen4exp-gpu/suite.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
export STRATA_SOURCE_DIR=$PWD  # the project's fixtures for the test binaries
q=tests/model/data/qwen4exp
for tier in map ssd ram; do
  step "parity_qwen4exp_ple_$tier" 120 "$bin/strata" parity --device gpu --ple-table "$tier" -m "$q.gguf" --ref "$q.ref.gguf"
  grep -E "PASS|FAIL|error|nmse" "$out/parity_qwen4exp_ple_$tier.txt" | head -4
done
step parity_qwen4exp_slots1_ssd 120 "$bin/strata" parity --device gpu --expert-slots 1 --ple-table ssd -m "$q.gguf" --ref "$q.ref.gguf"
grep -E "PASS|FAIL|error|nmse" "$out/parity_qwen4exp_slots1_ssd.txt" | head -4
step gpu_tests 540 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head -20
grep -E "op-parity .*(hc_|qsa|ple_|grouped)|gpu-parity .*qwen4exp|gpu-tiers .*qwen4exp" "$out/gpu_tests.txt" | head -60
tar -C "$out" -czf "$out.tgz" . && rm -rf "$out"
