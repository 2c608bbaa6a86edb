#!/usr/bin/env bash
# CPU decode on the device's 16-core Xeon against the bound measured in the same process:
# --load mmap (the file read through once first, so its pages are cached) and --load memory (huge
# pages), 16 and 8 threads, alternated over two rounds.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-8l.gguf
layers=8
synth_model
for round in 1 2; do
  for t in 16 8; do
    for load in mmap memory; do
      cat "$model" > /dev/null  # a memory run drops the file's cached pages behind its read
      name="cpu_t${t}_${load}_r$round"
      step "$name" 120 "$bin/strata" bench -m "$model" --device cpu -t "$t" --load "$load" -p 0 -n 64 -r 3
      echo "$name: $(grep -E '^\|.*tg64' "$out/$name.txt" | tr -s ' ')"
    done
  done
done
