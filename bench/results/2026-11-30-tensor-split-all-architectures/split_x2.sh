#!/usr/bin/env bash
# Two H200s: the split tests (NCCL and copies), then `strata parity --gpus 0,1 --split tensor` of
# every fixture.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step split_tests 300 "$bin/strata_gpu_tests" --gtest_filter='*Split*:*Collective*'
grep -E "FAILED|PASSED|SKIPPED \]|gpu-tensor-split" "$out/split_tests.txt" | head -40
for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
  step "split_parity_$m" 120 "$bin/strata" parity --gpus 0,1 --split tensor -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|rror|nmse|tensor split" "$out/split_parity_$m.txt" | head -6
done
