#!/usr/bin/env bash
# Issue 9, every expert in RAM, tg128, alternated, 3 rounds: the code before this change (BIN_OLD),
# the new code (next layer's router behind the routing's trip to the host; the last lane's thread
# joined after the host has planned), and the new code with STRATA_TIERS_PREDICT_FIRST=1.
source "$(dirname "$0")/device_common.sh" "$@"
old=${extra[0]:?BIN_OLD}
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name exe env... -- args...
  local name=$1 exe=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$exe/strata" bench -m "$model" --device gpu -p 0 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2 3; do
  gpu old_r$r "$old" X=1 -- -n 128 -r 2 --expert-slots 0
  gpu new_r$r "$bin" X=1 -- -n 128 -r 2 --expert-slots 0
  gpu first_r$r "$bin" STRATA_TIERS_PREDICT_FIRST=1 -- -n 128 -r 2 --expert-slots 0
done
gpu old_b2g "$old" X=1 -- -n 128 -r 2 --vram-budget 2GiB
gpu new_b2g "$bin" X=1 -- -n 128 -r 2 --vram-budget 2GiB
gpu old_b10 "$old" X=1 -- -n 128 -r 2 --vram-budget 10GiB
gpu new_b10 "$bin" X=1 -- -n 128 -r 2 --vram-budget 10GiB
