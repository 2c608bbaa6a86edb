#!/usr/bin/env bash
# The sampling tests alone (verbose), then the whole GPU suite; logs packed into OUT/logs.tar.gz.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_sampling 300 "$bin/strata_gpu_tests" --gtest_filter='*Sampling*'
grep -E "FAILED|PASSED|OK \]|SKIPPED \]|Failure|strata:|error" "$out/gpu_sampling.txt" | head -40
tail -20 "$out/gpu_sampling.txt"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
parity_fixtures
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
