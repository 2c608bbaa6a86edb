#!/usr/bin/env bash
# Prompt processing on int8 tensor cores (MMQ) and decode launches, in one go on a GPU machine:
# the GPU tests, `strata parity --device gpu` on every fixture (their 32-token prompts run as one
# batch, so through the MMQ tiles), then the BENCHMARKS.md synthetic Qwen3-30B-A3B: pp512, pp4096
# and tg128 with the MMQ kernel and, in the same run, without it (STRATA_GPU_MMQ=0: the f16
# tensor-core tiles) and without programmatic dependent launch (STRATA_GPU_PDL=0), an earlier
# build when BIN_DIR holds one as strata_a, depth 8192 (tg128, and pp4096 as llama.cpp's anchor), a
# 10 GiB budget (experts streamed through the tiers), and per-op profiles of pp512 and of decode.
# Logs go to OUT_DIR. Usage: scripts/device_mmq.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED" "$out/gpu_tests.txt" | head -30
grep -E "mmq.*FAIL" "$out/gpu_tests.txt" | head -20
grep -E "gpu-quantized" "$out/gpu_tests.txt"
STRATA_GPU_MMQ=0 step gpu_tests_no_mmq 300 "$bin/strata_gpu_tests" --gtest_filter='GpuOps.*:GpuMoe.*:*Parity*:GpuQuantized*'
STRATA_GPU_PDL=0 step gpu_tests_no_pdl 300 "$bin/strata_gpu_tests" --gtest_filter='GpuOps.*:GpuQ8*:*Parity*:GpuQuantized*'
for rows in 64 128; do
  STRATA_GPU_MMQ_ROWS=$rows step "gpu_tests_mmq_rows$rows" 300 "$bin/strata_gpu_tests" --gtest_filter='GpuMmq.*:GpuQuantized*'
done
grep -E "FAILED|PASSED|Failure|gpu-quantized" "$out"/gpu_tests_no_*.txt "$out"/gpu_tests_mmq_rows*.txt | head -16
parity_fixtures

model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench mmq -p 512 -n 128 -r 3
STRATA_GPU_MMQ=0 bench tc -p 512 -n 0 -r 3
STRATA_GPU_MMQ_ROWS=128 bench mmq_rows128 -p 512 -n 0 -r 3
STRATA_GPU_PDL=0 bench no_pdl -p 0 -n 128 -r 3
if [[ -x "$bin/strata_a" ]]; then  # an earlier build, for an A/B in the same run
  step bench_a 300 "$bin/strata_a" bench -m "$model" --device gpu -p 512 -n 128 -r 3
  grep -E "pp|tg" "$out/bench_a.txt" | head -4
fi
bench d8192 -p 0 -n 128 -d 8192 -r 2
bench pp4096_d8192 -p 4096 -n 0 -d 8192 -b 4096 -r 2
bench mmq_pp4096 -p 4096 -n 0 -r 2 -b 4096
STRATA_GPU_MMQ=0 bench tc_pp4096 -p 4096 -n 0 -r 2 -b 4096
bench mmq_budget10 -p 512 -n 64 -r 2 --vram-budget 10GiB
step profile_pp 120 "$bin/strata" bench -m "$model" --device gpu -p 512 -n 0 -r 1 --gpu-profile
tail -24 "$out/profile_pp.txt"
step profile_tg 120 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 32 -r 1 --gpu-profile
tail -24 "$out/profile_tg.txt"
rm -f "$model"
