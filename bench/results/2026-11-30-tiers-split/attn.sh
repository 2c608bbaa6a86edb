#!/usr/bin/env bash
# Issue 4: the CPU attention's negligible scores taken as zero, against every exp()
# (STRATA_CPU_ATTN_ALL_EXP=1), alternated: pp512 and tg32 at 16 threads with --cpu-profile, the
# 8-layer synthetic model.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
for r in 1 2; do
  for v in 0 1; do
    step attn_allexp${v}_r$r 300 env STRATA_CPU_ATTN_ALL_EXP=$v "$bin/strata" bench -m "$model" --device cpu -p 512 -n 32 -r 1 --cpu-profile
    echo "allexp=$v r$r: $(grep -E '\| *(pp|tg)[0-9]|attention|matmul ' "$out/attn_allexp${v}_r$r.txt" | awk -F'|' '{printf "%s %s %s;", $2, $3, $4}')"
  done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
