#!/usr/bin/env bash
# The GPU suite (typed one-column mat-vecs now the default; the tensor split of qwen3next,
# qwen35moe and deepseek3, here with both ranks on one GPU), then `strata parity` of every fixture on
# one GPU and split by tensor over "two" GPUs that are the same card (copies all-reduce).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 500 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|gpu-tensor-split" "$out/gpu_tests.txt" | head -40
parity_fixtures
for m in qwen3next qwen35moe deepseek3 qwen3moe; do
  step "split_parity_$m" 120 "$bin/strata" parity --gpus 0,0 --split tensor -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|rror|nmse|placement" "$out/split_parity_$m.txt" | head -6
done
