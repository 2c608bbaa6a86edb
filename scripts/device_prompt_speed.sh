#!/usr/bin/env bash
# Prompt processing on a GPU machine, in one go: the GPU tests, `strata parity --device gpu` on the
# fixtures, then the BENCHMARKS.md synthetic Qwen3-30B-A3B: pp512 and pp4096 with the tensor-core
# prompt matmul and without it (STRATA_GPU_TENSOR_CORES=0, the f32 tiled kernel) in the same run,
# the tensor-core kernel's tiles of 64 weight rows against its 128-row ones (STRATA_GPU_TC_ROWS=64),
# tg128 to check decode is untouched, a 10 GiB budget (streamed experts), and a per-op profile.
# Logs go to OUT_DIR. Usage: scripts/device_prompt_speed.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 300 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED" "$out/gpu_tests.txt" | head -20
grep -E "f16 tensor cores" "$out/gpu_tests.txt" | head -6
STRATA_GPU_TC_ROWS=64 step gpu_tests_rows64 120 "$bin/strata_gpu_tests" --gtest_filter='GpuOps.*:GpuMoe.*:*Parity*'
STRATA_GPU_TC_ROWS=128 step gpu_tests_rows128 120 "$bin/strata_gpu_tests" --gtest_filter='GpuOps.*:GpuMoe.*:*Parity*'
grep -E "FAILED|PASSED|Failure" "$out/gpu_tests_rows64.txt" "$out/gpu_tests_rows128.txt" | head -8
for m in llama qwen3 qwen3moe mixtral; do
  step "parity_$m" 120 "$bin/strata" parity --device gpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_$m.txt" | head -3
done

model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench tc -p 512 -n 128 -r 3
STRATA_GPU_TC_ROWS=64 bench tc_rows64 -p 512 -n 0 -r 3
STRATA_GPU_TENSOR_CORES=0 bench f32 -p 512 -n 0 -r 3
bench tc_pp4096 -p 4096 -n 0 -r 2 -b 4096
STRATA_GPU_TC_ROWS=64 bench tc_rows64_pp4096 -p 4096 -n 0 -r 2 -b 4096
STRATA_GPU_TENSOR_CORES=0 bench f32_pp4096 -p 4096 -n 0 -r 2 -b 4096
bench tc_budget10 -p 512 -n 0 -r 2 --vram-budget 10GiB
step profile_tc 120 "$bin/strata" bench -m "$model" --device gpu -p 512 -n 0 -r 1 --gpu-profile
tail -24 "$out/profile_tc.txt"
rm -f "$model"
