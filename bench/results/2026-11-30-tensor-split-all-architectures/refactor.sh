#!/usr/bin/env bash
# After the tensor-split upload refactor (upload_layer_parts, keep_rank_experts): the GPU suite,
# fixture parity on one GPU and split by tensor over the same card twice.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|over 4 ranks" "$out/gpu_tests.txt" | head -12
parity_fixtures
for m in qwen3next qwen35moe deepseek3 qwen3moe; do
  step "split_parity_$m" 120 "$bin/strata" parity --gpus 0,0 --split tensor -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|rror" "$out/split_parity_$m.txt" | head -4
done
