#!/usr/bin/env bash
# Issue 4: the CPU attention asking for the next block of rows ahead (STRATA_CPU_ATTN_PREFETCH
# blocks; 0: none), on the Xeon. One layer of decode attention (scratch/attention_layer_tokens.cpp)
# at depths 4096 and 16384 on 16 and 4 threads, 0/1/2 blocks alternated twice; then decode of the
# 8-layer synthetic Qwen3-30B-A3B at depth 4096 on 16 threads, 0 against 1, twice.
source "$(dirname "$0")/device_common.sh" "$@"
for r in 1 2; do
  for d in 4096 16384; do
    for t in 16 4; do
      for a in 0 1 2; do
        step "layer_d${d}_t${t}_a${a}_r$r" 60 env STRATA_CPU_ATTN_PREFETCH=$a "$bin/attention_layer_tokens" "$d" "$t" 1
        echo "a$a r$r: $(tail -1 "$out/layer_d${d}_t${t}_a${a}_r$r.txt")"
      done
    done
  done
done
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
cat "$model" > /dev/null
for r in 1 2; do
  for a in 1 0; do
    step "d4096_a${a}_r$r" 300 env STRATA_CPU_ATTN_PREFETCH=$a "$bin/strata" bench -m "$model" --device cpu -p 0 -n 32 -r 2 -d 4096 --cpu-profile
    echo "d4096 a$a r$r: $(grep -E '^\|.*tg32|attention' "$out/d4096_a${a}_r$r.txt" | tr -s ' ' | tr '\n' ' ')"
  done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
