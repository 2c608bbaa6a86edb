#!/usr/bin/env bash
# Issue 4: one layer of decode attention (32 query heads over 4 kv heads of 128, f16 cache) with
# the chunked decode (attention_layer_chunks) against the kept code (attention_layer_tokens),
# alternated, on 8 and 16 Xeon threads at depths 4096 and 16384.
source "$(dirname "$0")/device_common.sh" "$@"
for r in 1 2; do
  for d in 4096 16384; do
    for t in 8 16; do
      for v in tokens chunks; do
        step "${v}_d${d}_t${t}_r$r" 60 "$bin/attention_layer_$v" "$d" "$t" 1
        echo "$v r$r: $(tail -1 "$out/${v}_d${d}_t${t}_r$r.txt")"
      done
    done
  done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
