#!/usr/bin/env bash
# Issue 4: the read-bandwidth probe's AVX2 loop, plain and with a software prefetch 2 or 4 KiB
# ahead, on 1, 4, 8 and 16 Xeon threads (1 GiB, best of 2 passes, 4 rounds alternated).
out=$1; mkdir -p "$out"
for t in 1 4 8 16; do
  echo "threads $t" | tee -a "$out/probe.txt"
  # probe_pf: scratch/probe_prefetch.cpp, built as its header says
  "$(dirname "$0")/probe_pf" "$t" 2>&1 | tee -a "$out/probe.txt"
done
