#!/usr/bin/env bash
# Build check: the CPU matmul's software prefetches survive compilation. GCC deletes calls to a
# function whose only effect is __builtin_prefetch (it has no side effects to keep), so one
# refactoring of backend/cpu/matmul.cpp removed them all without changing any result; decode on
# 16 Xeon threads fell from ~100% to ~75% of the bandwidth bound. The x86 binary must hold the
# prefetch instructions. Skips (exit 0, saying so) without objdump or on other architectures.
# Usage: matmul_prefetch_kept.sh <strata> <testdata-root>
set -euo pipefail
strata=$1
if ! command -v objdump >/dev/null; then echo "skipped: no objdump"; exit 0; fi
case $(uname -m) in x86_64|amd64) ;; *) echo "skipped: not x86-64"; exit 0 ;; esac
# Counted inside the matmul's own functions (the bandwidth probe's read loops prefetch too),
# wherever the compiler inlined its row loop.
count=$(objdump -d --no-show-raw-insn -C "$strata" |
  awk '/^[0-9a-f]+ <.*>:$/ { matmul = /cpu_matmul|compute_rows|StreamRuns/ } matmul && /\tprefetcht0 / { n++ } END { print n + 0 }')
if (( count < 4 )); then
  echo "FAIL: $count prefetcht0 instructions in $strata; the CPU matmul's software prefetches were compiled away" >&2
  exit 1
fi
echo "matmul prefetch kept: $count prefetcht0 instructions"
