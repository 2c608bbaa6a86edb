#!/usr/bin/env bash
# Issue 31 on the device after the reshape (KV type, architecture table, GPU forward passes moved
# to model/gpu/, policy and lane enums, tuning passed in): GPU parity of every fixture against HF's
# logits, tiered parity with 2 expert slots on the MoE fixtures, CPU parity of every fixture — to
# be compared digit for digit with the last run before it (2026-12-01-cpu-attention-groups,
# raw/device_final) — then the whole GPU test suite.
# Usage (repo root on the device): bench/results/2026-12-02-engine-reshape/device.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
parity_fixtures
tiered_parity_fixtures
cpu_parity_fixtures
step gpu_tests 480 "$bin/strata_gpu_tests"
tail -2 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head
