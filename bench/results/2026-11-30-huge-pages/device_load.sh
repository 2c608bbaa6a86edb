#!/usr/bin/env bash
# CPU decode on the device, 8-layer synthetic Qwen3-30B-A3B: --load auto (now the default; reads
# into memory on huge pages for --device cpu) against --load mmap with the page cache warmed
# first; alternated, 3 rounds at 16 threads and 2 at 8.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
grep -E "AnonHugePages" /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/enabled
layers=8 synth_model
cpu() {  # name threads args...
  local name=$1 t=$2; shift 2
  step "$name" 200 "$bin/strata" bench -m "$model" --device cpu -t "$t" -p 0 -n 64 -r 3 "$@"
  echo "$name: $(grep -E '^\|.*tg[0-9]|bandwidth' "$out/$name.txt" | sed 's/(.*MiB)//' | tr -s ' ' | tr '\n' ' ')"
}
for r in 1 2 3; do
  cpu t16_auto_r$r 16
  cat "$model" > /dev/null  # the mapped run reads from the page cache, not the disk
  cpu t16_mmap_r$r 16 --load mmap
done
for r in 1 2; do
  cpu t8_auto_r$r 8
  cat "$model" > /dev/null
  cpu t8_mmap_r$r 8 --load mmap
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
