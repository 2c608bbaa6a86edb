#!/usr/bin/env bash
# Every expert in RAM and a 10 GiB budget, tg128: pool threads 16 (all cores; the host thread
# that waits on the GPU spins beside them) against 15 and 14; alternated.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
gpu() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 --expert-prefetch 3 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2; do
  for t in 16 15 14; do gpu ram_t${t}_r$r --expert-slots 0 -t $t; done
  for t in 16 15; do gpu b10_t${t}_r$r --vram-budget 10GiB -t $t; done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
