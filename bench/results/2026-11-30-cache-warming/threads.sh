#!/usr/bin/env bash
# Every expert in RAM, tg128, the final binary (ab.sh's): 16, 15 and 14 pool threads with warming, and 15
# without; alternated, 3 rounds.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2 3; do
  gpu t16_warm_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0
  gpu t15_warm_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 -t 15
  gpu t14_warm_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 -t 14
  gpu t15_off_r$r STRATA_TIERS_WARM=0 -- --expert-slots 0 -t 15
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
