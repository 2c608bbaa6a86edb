#!/usr/bin/env bash
# The early combine of the expert tiers: the tier tests (the new bit-for-bit check among them) and
# the whole GPU suite, then tg64 with every expert in RAM and with a 10 GiB budget, the GPU
# awaiting the CPU lane (default) against the host awaiting it (STRATA_TIERS_EARLY_COMBINE=0),
# alternated; logs packed into OUT/logs.tar.gz.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tiers 300 "$bin/strata_gpu_tests" --gtest_filter='*ExpertTiers*'
grep -E "FAILED|PASSED|early combine|Failure" "$out/gpu_tiers.txt" | head -20
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -3 | tr '\n' ' ')"
}
for round in 1 2; do
  STRATA_TIERS_EARLY_COMBINE=0 run "ram_host_r$round" --device gpu --expert-slots 0 -p 0 -n 64 -r 3
  run "ram_gpu_r$round" --device gpu --expert-slots 0 -p 0 -n 64 -r 3
  STRATA_TIERS_EARLY_COMBINE=0 run "b10_host_r$round" --device gpu --vram-budget 10GiB -p 0 -n 64 -r 3
  run "b10_gpu_r$round" --device gpu --vram-budget 10GiB -p 0 -n 64 -r 3
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
