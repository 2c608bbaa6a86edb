#!/usr/bin/env bash
# Issue 38 (third point) on the device: expert FFNs of 24 and 48 values through the tiers with one
# slot. The new test on the build before the fix (BIN/strata_gpu_tests_broken, expected to die with
# the internal error) and after it, then the whole GPU suite (its tiered cases on qwen3moe and
# gptoss, the fixtures the 64 MiB carry had room for).
# Usage (repo root on the device): bench/results/2026-12-01-narrow-expert-ffn/device.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
step narrow_broken 120 "$bin/strata_gpu_tests_broken" --gtest_filter='*NarrowFfn*'
grep -E "internal error|OK|FAILED" "$out/narrow_broken.txt" | head -6
step narrow_fixed 120 "$bin/strata_gpu_tests" --gtest_filter='*NarrowFfn*'
grep -E "internal error|OK|FAILED|Failure" "$out/narrow_fixed.txt" | head -8
step gpu_tests 420 "$bin/strata_gpu_tests"
tail -2 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head
