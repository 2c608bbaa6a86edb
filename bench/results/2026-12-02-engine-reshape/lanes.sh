#!/usr/bin/env bash
# Issue 31: tiered parity with 2 expert slots before the reshape (OLD_BIN, ab44ddb) and after it
# (BIN), each miss lane fixed (--miss-lane cpu, then stream) so that the lane each expert takes
# does not follow the link speed measured at load, which differs from start to start; the digits
# of the two builds should then be the same.
# Usage (repo root on the device): bench/results/2026-12-02-engine-reshape/lanes.sh OUT BIN TESTDATA 48 OLD_BIN
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
old_bin=${extra[0]:?OLD_BIN: the bin folder of the old build}
for lane in cpu stream; do
  for m in qwen3moe deepseek3 gptoss qwen35moe; do
    for which in old new; do
      b=$bin; [[ $which == old ]] && b=$old_bin
      step "tiny_${lane}_${m}_$which" 120 "$b/strata" parity --device gpu --expert-slots 2 --miss-lane "$lane" \
        -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
    done
    if diff <(grep -E "nmse|expert uses" "$out/tiny_${lane}_${m}_old.txt" | sed 's/host → VRAM [0-9.]* GB\/s//') \
            <(grep -E "nmse|expert uses" "$out/tiny_${lane}_${m}_new.txt" | sed 's/host → VRAM [0-9.]* GB\/s//') > /dev/null; then
      echo "$lane $m: the same digits and lanes"
    else
      echo "$lane $m: differ"; grep -hE "nmse" "$out/tiny_${lane}_${m}_old.txt" "$out/tiny_${lane}_${m}_new.txt"
    fi
  done
done
