#!/usr/bin/env bash
# q8_0 caches under latent attention: the MLA op tests, then the whole GPU suite and fixture parity;
# logs packed into OUT/logs.tar.gz.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_mla 300 "$bin/strata_gpu_tests" --gtest_filter='GpuMla*:GpuAttention*Q8*:*Sampling*'
grep -E "FAILED|PASSED|q8_0|Failure" "$out/gpu_mla.txt" | head -60
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
parity_fixtures
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
