#!/usr/bin/env bash
# Every expert in RAM, tg128: every miss on the CPU (--miss-lane cpu) with 3, 4 or 5 experts
# copied ahead, against the default split (auto, 3 ahead); warming on unless said.
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
for r in 1 2; do
  gpu auto_pf3_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0
  gpu cpu_pf3_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 --miss-lane cpu
  gpu cpu_pf4_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 --miss-lane cpu --expert-prefetch 4
  gpu cpu_pf5_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 --miss-lane cpu --expert-prefetch 5
  gpu cpu_pf4_nowarm_r$r STRATA_TIERS_WARM=0 -- --expert-slots 0 --miss-lane cpu --expert-prefetch 4
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
