#!/usr/bin/env bash
# Every expert in RAM, tg128, with the serial path between CPU lanes timed (bench's 'between CPU
# lanes' line): warming on and off, 15 pool threads, and each lane forced (--miss-lane cpu/stream).
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
  gpu ram_warm_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0
  gpu ram_nowarm_r$r STRATA_TIERS_WARM=0 -- --expert-slots 0
  gpu ram_warm_t15_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0 -t 15
done
gpu ram_warm_cpu STRATA_TIERS_WARM=1 -- --expert-slots 0 --miss-lane cpu
gpu ram_warm_stream STRATA_TIERS_WARM=1 -- --expert-slots 0 --miss-lane stream
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
