#!/usr/bin/env bash
# Prompt attention on tensor cores and the session's other changes, in one go on a GPU machine: the
# GPU tests (default, and with the tensor-core flash attention off), `strata parity --device gpu`
# on every fixture, then the BENCHMARKS.md synthetic Qwen3-30B-A3B:
#   - prompts with and without the tensor-core flash attention (STRATA_GPU_FLASH_MMA=0): pp512,
#     pp4096, and pp4096 at depth 8192 (llama.cpp's anchor);
#   - decode: tg128 and tg128 at depth 8192, against BIN_DIR/strata_a (an earlier build) when
#     present, both with the flash switch off so that only decode differs;
#   - the tiers: all experts in RAM (pp512, pp4096 with batch 4096, tg64) and a 10 GiB budget;
#   - a per-op profile of pp4096.
# Logs go to OUT_DIR. Usage: scripts/device_prompt_attention.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED" "$out/gpu_tests.txt" | head -20
STRATA_GPU_FLASH_MMA=0 step gpu_tests_no_flash_mma 300 "$bin/strata_gpu_tests" --gtest_filter='GpuAttention.*:*Parity*:GpuQuantized*'
grep -E "FAILED|PASSED|Failure" "$out/gpu_tests_no_flash_mma.txt" | head -8
parity_fixtures

model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench pp -p 512,4096 -n 0 -b 4096 -r 2
STRATA_GPU_FLASH_MMA=0 bench pp_fma -p 512,4096 -n 0 -b 4096 -r 2
bench pp4096_d8192 -p 4096 -n 0 -d 8192 -b 4096 -r 2
STRATA_GPU_FLASH_MMA=0 bench pp4096_d8192_fma -p 4096 -n 0 -d 8192 -b 4096 -r 2
for round in 1 2; do
  STRATA_GPU_FLASH_MMA=0 bench "tg_$round" -p 0 -n 128 -r 3
  STRATA_GPU_FLASH_MMA=0 bench "tg_d8192_$round" -p 0 -n 128 -d 8192 -r 2
  if [[ -x "$bin/strata_a" ]]; then
    STRATA_GPU_FLASH_MMA=0 step "bench_a_tg_$round" 300 "$bin/strata_a" bench -m "$model" --device gpu -p 0 -n 128 -r 3
    STRATA_GPU_FLASH_MMA=0 step "bench_a_tg_d8192_$round" 300 "$bin/strata_a" bench -m "$model" --device gpu -p 0 -n 128 \
      -d 8192 -r 2
    grep -hE "tg" "$out/bench_a_tg_$round.txt" "$out/bench_a_tg_d8192_$round.txt" | sed 's/^/strata_a: /'
  fi
done
bench ram -p 512 -n 64 -r 2 --expert-slots 0
bench ram_pp4096 -p 4096 -n 0 -b 4096 -r 1 --expert-slots 0
bench budget10 -p 512 -n 64 -r 2 --vram-budget 10GiB
step profile_pp4096 120 "$bin/strata" bench -m "$model" --device gpu -p 4096 -n 0 -b 4096 -r 1 --gpu-profile
tail -24 "$out/profile_pp4096.txt"
rm -f "$model"
