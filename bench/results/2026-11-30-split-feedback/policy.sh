#!/usr/bin/env bash
# Issue 9: the GPU suite on the code with the synthetic model's new attention rule, then the
# policy's decisions with only the needed victims put in order (was: every resident sorted each
# step), on the new 48-layer synthetic model: every budget, decode and prompts.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED|gpu-quantized" "$out/gpu_tests.txt" | head
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -8 | tr '\n' ' ')"
}
gpu b16 -p 512 -n 128 -r 2 --vram-budget 16GiB
gpu b10 -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu b2 -p 0 -n 128 -r 2 --vram-budget 2GiB
gpu ram -p 512 -n 128 -r 2 --expert-slots 0
gpu b10_lfu -p 0 -n 128 -r 2 --vram-budget 10GiB --expert-policy lfu
