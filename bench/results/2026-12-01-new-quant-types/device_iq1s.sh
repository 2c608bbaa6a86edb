#!/usr/bin/env bash
# Issue 32 on the device, fifth run: an AVX-512 IQ1_S kernel (IQ1_M's scheme: two 32-groups per
# 512-bit register, VNNI word dots) against the AVX2 one it would replace: the quant suite, both
# kernels on one thread, and the 16-thread expert products. The kernel was not kept (README).
# Usage (repo root on the device): bench/results/2026-12-01-new-quant-types/device_iq1s.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
step quant_tests 300 "$bin/strata_quant_tests"
tail -2 "$out/quant_tests.txt"; grep -E "FAILED|Failure" "$out/quant_tests.txt" | head -20
grep -E "IQ1_S_avx512" "$out/quant_tests.txt" | grep -E "OK|FAIL"
step dot_bench 200 "$bin/quant_dot_bench" --benchmark_filter='(IQ1_S|IQ1_M|bandwidth).*(avx512|avx2)' --benchmark_min_time=0.2
grep -E "dot/|read_" "$out/dot_bench.txt" | awk '{print $1, $NF}'
step expert_bench_t16 300 "$bin/expert_matmul_bench" --threads=16 --benchmark_min_time=0.5 \
  --benchmark_filter='Q4_K|IQ1_S' --benchmark_format=json --benchmark_out="$out/expert_matmul_t16.json"
tar -C "$out" -czf /tmp/logs.tar.gz --exclude='*.json' . && find "$out" -name '*.txt' -delete && mv /tmp/logs.tar.gz "$out/"
