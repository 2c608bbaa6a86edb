#!/usr/bin/env bash
# Issue 4: one layer of decode attention at depth 4096 (32 query heads over 4 kv heads of 128, f16
# cache) on 1-16 Xeon threads, and at depths 512 and 16384 on 16 and 4, to see what limits it.
source "$(dirname "$0")/device_common.sh" "$@"
for t in 1 2 4 8 16; do
  step "d4096_t$t" 60 "$bin/attention_layer_tokens" 4096 "$t" 1
  echo "t$t: $(tail -2 "$out/d4096_t$t.txt" | tr '\n' ' ')"
done
for d in 512 16384; do
  for t in 4 16; do
    step "d${d}_t$t" 60 "$bin/attention_layer_tokens" "$d" "$t" 1
    echo "d$d t$t: $(tail -1 "$out/d${d}_t$t.txt")"
  done
done
step prompt_t16 120 "$bin/attention_layer_tokens" 4032 16 64
echo "prompt: $(tail -1 "$out/prompt_t16.txt")"
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
