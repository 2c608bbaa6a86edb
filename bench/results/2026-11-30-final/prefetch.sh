#!/usr/bin/env bash
# Experts copied ahead per decode step: 2 (the default) against 4, alternated, with every expert in
# RAM and with 10 GiB and 16 GiB budgets (tg128); logs packed into OUT/logs.tar.gz.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for round in 1 2; do
  for pf in 2 4 3; do run "ram_pf${pf}_r$round" --expert-slots 0 --expert-prefetch $pf; done
  for pf in 2 4; do run "b10_pf${pf}_r$round" --vram-budget 10GiB --expert-prefetch $pf; done
done
for pf in 2 4; do run "b16_pf$pf" --vram-budget 16GiB --expert-prefetch $pf; done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
