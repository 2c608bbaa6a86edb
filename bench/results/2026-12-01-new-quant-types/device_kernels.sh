#!/usr/bin/env bash
# Issue 32 on the device, third and fourth runs: the AVX-512 kernels of Q1_0 and Q2_0 (third) and
# NVFP4 (fourth) that sum integers per Q8_0 block (NVFP4: per sub-block) and apply the scales of
# eight blocks (sixteen sub-blocks) in one vector: the quant suite (same numbers as the scalar
# reference and ggml's), the single-thread kernels, and the 16-thread expert products.
# Usage (repo root on the device): bench/results/2026-12-01-new-quant-types/device_kernels.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
step quant_tests 300 "$bin/strata_quant_tests"
tail -2 "$out/quant_tests.txt"; grep -E "FAILED|Failure" "$out/quant_tests.txt" | head -20
step dot_bench 200 "$bin/quant_dot_bench" --benchmark_filter='(Q1_0|Q2_0|NVFP4|MXFP4|Q4_K|bandwidth).*(avx512|avx2)' --benchmark_min_time=0.2
grep -E "dot/|read_" "$out/dot_bench.txt" | awk '{print $1, $NF}'
step expert_bench_t16 300 "$bin/expert_matmul_bench" --threads=16 --benchmark_min_time=0.5 \
  --benchmark_filter='Q4_K|Q2_0|Q1_0|NVFP4|MXFP4' --benchmark_format=json --benchmark_out="$out/expert_matmul_t16.json"
tar -C "$out" -czf /tmp/logs.tar.gz --exclude='*.json' . && find "$out" -name '*.txt' -delete && mv /tmp/logs.tar.gz "$out/"
