#!/usr/bin/env bash
# Issue 9: experts copied ahead by the next layer's router (--expert-prefetch N) in decode, all in
# RAM and with a 10 GiB budget, uniform and skewed routing; then the GPU tests and parity.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|gpu-tiers prefetch" "$out/gpu_tests.txt" | head -12
model=synth-qwen3-30b-a3b.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*experts://')"
}
for round in 1 2; do
  for pf in 0 1 2 4; do
    run "ram_pf${pf}_r$round" -p 0 -n 64 -r 3 --expert-slots 0 --expert-prefetch $pf
    run "b10_pf${pf}_r$round" -p 0 -n 64 -r 3 --vram-budget 10GiB --expert-prefetch $pf
  done
done
run ram_pp_pf2 -p 512 -n 0 -r 2 --expert-slots 0
step synth_skew 300 "$bin/strata" synth --preset qwen3-30b-a3b --layers 48 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o "$model" --router-skew 1.0
for round in 1 2; do
  for pf in 0 2; do
    run "skew_b10_pf${pf}_r$round" -p 0 -n 64 -r 3 --vram-budget 10GiB --expert-prefetch $pf
  done
done
parity_fixtures
