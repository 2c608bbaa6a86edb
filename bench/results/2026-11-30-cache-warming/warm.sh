#!/usr/bin/env bash
# Every expert in RAM (and a 10 GiB budget), tg128: the CPU lane reading the next layer's likely
# experts into cache while it waits for the routing (default) against not (STRATA_TIERS_WARM=0),
# alternated within one start; and with warming, experts copied ahead 2 and 4 besides the default 3.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2 3; do
  gpu ram_warm_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0
  gpu ram_nowarm_r$r STRATA_TIERS_WARM=0 -- --expert-slots 0
done
for r in 1 2; do
  gpu ram_warm_pf2_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 --expert-prefetch 2
  gpu ram_warm_pf4_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 --expert-prefetch 4
  gpu b10_warm_r$r STRATA_TIERS_WARM=1 -- --vram-budget 10GiB
  gpu b10_nowarm_r$r STRATA_TIERS_WARM=0 -- --vram-budget 10GiB
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
