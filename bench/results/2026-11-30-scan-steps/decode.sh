#!/usr/bin/env bash
# Issue 9, decode with every expert in RAM: one step's timeline (STRATA_TIERS_TIMELINE counts every
# forward pass: the 60th is a decode step of the first tg128 run), then the CPU thread count
# (-t 12, 15 = the default here, 16) alternated, 2 rounds; the 10 GiB budget once.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
gpu tl_ram STRATA_TIERS_TIMELINE=60 -- -p 0 -n 128 -r 1 --expert-slots 0
echo "timeline rows: $(grep -c '^timeline' "$out/tl_ram.txt")"
for r in 1 2; do
  gpu t15_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu t16_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0 -t 16
  gpu t12_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0 -t 12
done
gpu b10 X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
