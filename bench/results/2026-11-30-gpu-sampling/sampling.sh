#!/usr/bin/env bash
# Sampling on the GPU: its tests and the whole GPU suite; then, on the synthetic Qwen3-30B-A3B,
# tg128 with the logits copied to the host (STRATA_GPU_SAMPLING=0) against the device reduction,
# `strata run` generation with three sampler settings both ways (same seed: the texts must match),
# the tiers' decode, and the server under load both ways (16 slots: the multi-sequence rows).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_sampling 300 "$bin/strata_gpu_tests" --gtest_filter='*Sampling*'
grep -E "FAILED|PASSED|OK \]|SKIPPED \]|Failure" "$out/gpu_sampling.txt" | head -30
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -12
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|hit' "$out/$name.txt" | tr -s ' ' | head -3 | tr '\n' ' ')"
}
for round in 1 2; do
  STRATA_GPU_SAMPLING=0 run "tg128_host_r$round" --device gpu -p 0 -n 128 -r 3
  run "tg128_dev_r$round" --device gpu -p 0 -n 128 -r 3
done
gen() {  # name args...: strata run both ways, then whether the texts match
  local name=$1; shift
  for where in host dev; do
    local v=1; [[ $where == host ]] && v=0
    STRATA_GPU_SAMPLING=$v step "gen_${name}_$where" 120 "$bin/strata" run -m "$model" --device gpu \
      -p "The quick brown fox" -n 256 --ignore-eos --seed 7 "$@"
    echo "gen_${name}_$where: $(grep -E 'generated' "$out/gen_${name}_$where.txt" | tail -1)"
  done
  head -c 4000 "$out/gen_${name}_host.txt" | head -n -2 > /tmp/a.txt
  head -c 4000 "$out/gen_${name}_dev.txt" | head -n -2 > /tmp/b.txt
  cmp -s /tmp/a.txt /tmp/b.txt && echo "gen_$name: same text" || echo "gen_$name: TEXTS DIFFER"
}
gen greedy --temp 0
gen default
gen top_p --temp 0.7 --top-k 0 --top-p 0.9 --min-p 0
gen penalties --temp 0.9 --repeat-penalty 1.3 --presence-penalty 0.5 --frequency-penalty 0.5
STRATA_GPU_SAMPLING=0 run tiers10_host --device gpu --vram-budget 10GiB -p 0 -n 64 -r 2
run tiers10_dev --device gpu --vram-budget 10GiB -p 0 -n 64 -r 2
STRATA_GPU_SAMPLING=0 serve_load host
serve_load dev
