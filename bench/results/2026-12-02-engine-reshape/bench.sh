#!/usr/bin/env bash
# Issue 31: `strata bench` before the reshape (ab44ddb, the code the reshape started from) and
# after it (OLD_BIN and BIN), alternated within one start of the machine, on the README's
# scenarios with the BENCHMARKS.md synthetic Qwen3-30B-A3B (48 layers): everything in VRAM at
# pp512/tg128 and pp4096, a 10 GiB budget, every expert in RAM. Two rounds, each binary once per
# round and scenario.
# Usage (repo root on the device): bench/results/2026-12-02-engine-reshape/bench.sh OUT BIN TESTDATA 48 OLD_BIN
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
old_bin=${extra[0]:?OLD_BIN: the bin folder of the old build}
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
scenarios=(
  "vram|-p 512 -n 128 -r 2"
  "vram4096|-p 4096 -b 4096 -n 0 -r 2"
  "b10|-p 512 -n 128 -r 2 --vram-budget 10GiB"
  "ram|-p 512 -n 128 -r 2 --expert-slots 0"
)
for round in 1 2; do
  for s in "${scenarios[@]}"; do
    name=${s%%|*}; read -r -a args <<< "${s#*|}"
    for which in old new; do
      b=$bin; [[ $which == old ]] && b=$old_bin
      step "${name}_${which}_r$round" 300 "$b/strata" bench -m "$model" --device gpu "${args[@]}"
      echo "${name}_${which}_r$round: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/${name}_${which}_r$round.txt" | tr -s ' ' | head -4 | tr '\n' ' ')"
    done
  done
done
rm -f "$model"
