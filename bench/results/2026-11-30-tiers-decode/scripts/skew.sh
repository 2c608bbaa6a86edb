#!/usr/bin/env bash
# Issue 9: experts copied ahead with skewed routing (Zipf 1.0), 10 GiB budget, prefetch 0 vs 2.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step tier_tests 120 "$bin/strata_gpu_tests" --gtest_filter='*Tier*:*Fused*'
grep -E "FAILED|PASSED" "$out/tier_tests.txt" | head -4
model=synth-qwen3-30b-a3b.gguf
synth_model --router-skew 1.0
for round in 1; do
  for pf in 0 2; do
    name="skew_b10_pf${pf}_r$round"
    step "$name" 300 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 64 -r 3 --vram-budget 10GiB --expert-prefetch $pf
    echo "$name: $(grep -E '^\|.*tg[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*experts://')"
  done
done
