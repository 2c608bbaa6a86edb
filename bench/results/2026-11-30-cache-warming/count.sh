#!/usr/bin/env bash
# Every expert in RAM, tg128, default pool (15 threads): experts read ahead per layer as the
# split predicts (0) and 2 or 1 fewer or 1 more (an experiment switch of this build only,
# STRATA_X_WARM_EXTRA, since removed); alternated, 3 rounds; and pp512.
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
  gpu warm0_r$r STRATA_X_WARM_EXTRA=0 -- --expert-slots 0
  gpu warmm1_r$r STRATA_X_WARM_EXTRA=-1 -- --expert-slots 0
  gpu warmp1_r$r STRATA_X_WARM_EXTRA=1 -- --expert-slots 0
  gpu warmm2_r$r STRATA_X_WARM_EXTRA=-2 -- --expert-slots 0
done
gpu pp_ram STRATA_X_WARM_EXTRA=0 -- --expert-slots 0 -p 512 -n 0
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
