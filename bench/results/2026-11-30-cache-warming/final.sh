#!/usr/bin/env bash
# The final code (ba22720): the GPU suite and strata parity --device gpu on every fixture.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
