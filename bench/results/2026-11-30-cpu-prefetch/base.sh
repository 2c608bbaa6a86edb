#!/usr/bin/env bash
# CPU decode (8-layer synthetic Qwen3-30B-A3B) at 16 and 8 threads and the GPU's CPU lane (48
# layers, every expert in RAM; 10 GiB budget): the previous commit's binary (base/) against this
# one (new/), and within new/ the claim/prefetch scheme turned off by its experiment switches.
source "$(dirname "$0")/device_common.sh" "$@"
base=$bin/../base/bin/strata
[[ -x $base ]] || base=/tmp/base/bin/strata
model=MODEL
layers=8 synth_model
cat "$model" > /dev/null
run() {  # name binary threads env...
  local name=$1 exe=$2 t=$3; shift 3
  step "$name" 200 env "$@" "$exe" bench -m "$model" --device cpu -t "$t" -p 0 -n 64 -r 3
  echo "$name: $(grep -E '^\|.*tg[0-9]|bandwidth' "$out/$name.txt" | sed 's/(.*MiB)//' | tr -s ' ' | tr '\n' ' ')"
}
for r in 1 2 3; do
  run t16_base_r$r "$base" 16
  run t16_new_r$r "$bin/strata" 16
  run t16_noclaim_r$r "$bin/strata" 16 STRATA_X_MAXCLAIM=1 STRATA_X_PF_BYTES=0
done
for r in 1 2; do
  run t8_base_r$r "$base" 8
  run t8_new_r$r "$bin/strata" 8
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
