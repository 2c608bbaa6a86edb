#!/usr/bin/env bash
# Prefetch for biased (gpt-oss) and grouped (DeepSeek) routers: the tier tests, then the whole GPU
# suite; logs packed into OUT/logs.tar.gz.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tiers 300 "$bin/strata_gpu_tests" --gtest_filter='*ExpertTiers*'
grep -E "FAILED|PASSED|prefetch|Failure" "$out/gpu_tiers.txt" | head -20
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
