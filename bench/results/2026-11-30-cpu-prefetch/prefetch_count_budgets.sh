#!/usr/bin/env bash
# 10 and 16 GiB budgets, tg128: experts copied ahead per decode step (--expert-prefetch) now that
# the CPU lane is faster; alternated, two rounds.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
gpu() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2; do
  for p in 4 3; do gpu b10_pf${p}_r$r --vram-budget 10GiB --expert-prefetch $p; gpu b16_pf${p}_r$r --vram-budget 16GiB --expert-prefetch $p; done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
