#!/usr/bin/env bash
# Issue 32 on the device: NVFP4, Q1_0 and Q2_0 (and every other type) through the GPU op-parity
# suite, the quant suite at AVX-512 (the Xeon has it, the development machine not), two parity
# fixtures on the GPU (the MoE ones; the 64 MiB a call carries had no room for all eight), and
# the multi-threaded expert products per type against the DRAM bandwidth on 16 threads.
# Usage (from the repo root on the device): bench/results/2026-12-01-new-quant-types/device.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED|Failure" "$out/gpu_tests.txt" | head -20
grep -E "NVFP4|Q1_0|Q2_0" "$out/gpu_tests.txt" | grep -vE "^\[ +OK" | head -20
step quant_tests 300 "$bin/strata_quant_tests"
tail -2 "$out/quant_tests.txt"; grep -E "FAILED|Failure" "$out/quant_tests.txt" | head -20
for m in qwen3moe gptoss; do
  step "parity_$m" 120 "$bin/strata" parity --device gpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_$m.txt" | head -3
done
step expert_bench_t16 400 "$bin/expert_matmul_bench" --threads=16 --benchmark_min_time=0.5 \
  --benchmark_format=json --benchmark_out="$out/expert_matmul_t16.json"
grep -E "experts/" "$out/expert_bench_t16.txt"
tar -C "$out" -czf /tmp/logs.tar.gz --exclude='*.json' . && find "$out" -name '*.txt' -delete && mv /tmp/logs.tar.gz "$out/"
