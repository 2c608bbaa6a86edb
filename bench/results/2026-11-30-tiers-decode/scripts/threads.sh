#!/usr/bin/env bash
# Issue 9: CPU lane thread counts. With the lane on its own thread the process runs the pool's
# threads plus the thread that drives the GPU: 16 pool threads oversubscribe 16 cores by one.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=synth-qwen3-30b-a3b.gguf
synth_model
for round in 1 2; do
  for cfg in "new 16" "new 15" "new 14" "base 16" "base 15"; do
    set -- $cfg
    exe=$bin/strata; [[ $1 == base ]] && exe=$bin/strata-base
    for sc in ram b10; do
      args=(--expert-slots 0); [[ $sc == b10 ]] && args=(--vram-budget 10GiB)
      name="${sc}_$1_t$2_r$round"
      step "$name" 300 "$exe" bench -m "$model" --device gpu -p 0 -n 64 -r 3 -t "$2" "${args[@]}"
      echo "$name: $(grep -E '^\|.*tg[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*per token://')"
    done
  done
done
