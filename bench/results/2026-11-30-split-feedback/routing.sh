#!/usr/bin/env bash
# Issue 9: the 48-layer synthetic model written with the new attention rule (model/synth.cpp):
# its routing (strata profile, as in diag.sh) and the tiers' scenarios on it.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
cat "$model" > /dev/null
words=($(tr -cs 'A-Za-z' ' ' < README.md 2>/dev/null | head -c 20000))
for i in $(seq 1 24); do
  line=""; for j in $(seq 1 60); do line+="${words[$((RANDOM % ${#words[@]}))]} "; done; echo "$line"
done > /tmp/prompts.txt
step profile 300 "$bin/strata" profile -m "$model" --prompts /tmp/prompts.txt -o /tmp/synth.profile.json
grep -E "overall|hot set" "$out/profile.txt" | head -3
awk '/^ +[0-9]+ +[0-9]+ +[0-9.]+%/ {print $1, $3}' "$out/profile.txt" | tr '\n' ' '; echo
gpu() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -8 | tr '\n' ' ')"
}
gpu b10 -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu b16 -p 512 -n 128 -r 2 --vram-budget 16GiB
gpu b2 -p 0 -n 128 -r 2 --vram-budget 2GiB
gpu ram -p 512 -n 128 -r 2 --expert-slots 0
gpu vram -p 512 -n 128 -r 2
