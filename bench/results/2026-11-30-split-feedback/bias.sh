#!/usr/bin/env bash
# Issue 9, every expert in RAM, tg128, alternated, 3 rounds: the decode split's feedback with a
# step towards the CPU 1x (default), 2x, 3x and 0.5x its step away (STRATA_TIERS_SHARE_BIAS), and
# every miss on the CPU (--miss-lane cpu).
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu -p 0 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2 3; do
  gpu b1_r$r X=1 -- -n 128 -r 2 --expert-slots 0
  gpu b2_r$r STRATA_TIERS_SHARE_BIAS=2 -- -n 128 -r 2 --expert-slots 0
  gpu b3_r$r STRATA_TIERS_SHARE_BIAS=3 -- -n 128 -r 2 --expert-slots 0
  gpu bhalf_r$r STRATA_TIERS_SHARE_BIAS=0.5 -- -n 128 -r 2 --expert-slots 0
done
gpu cpu_r1 X=1 -- -n 128 -r 2 --expert-slots 0 --miss-lane cpu
