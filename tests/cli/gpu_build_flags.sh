#!/usr/bin/env bash
# scripts/gpu_build_flags.sh (what scripts/run.sh builds): the flavour follows the card
# `strata devices --which` reports — CUDA for that sm, HIP for that gfx — only when its toolkit is
# installed, and a CPU-only build, with the reason, otherwise. The device line and the toolkits are
# simulated, so the test runs anywhere; the real query (no GPU here) must answer CPU-only.
# Usage: gpu_build_flags.sh <strata> <testdata-root>
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
script=$root/scripts/gpu_build_flags.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#!/bin/sh\n' > "$work/fake-compiler" && chmod +x "$work/fake-compiler"
touch "$work/hip_runtime.h"

expect() {  # expected-flags expected-stderr-words env...
  local want=$1 words=$2; shift 2
  local got err
  got=$(env "$@" bash "$script" "$strata" 2>"$work/err")
  err=$(cat "$work/err")
  [[ "$got" == "$want" ]] || fail "$*: flags '$got', expected '$want'"
  grep -q -- "$words" <<<"$err" || fail "$*: stderr '$err' lacks '$words'"
}
nvidia="cuda 0 0000:01:00.0 sm_89 NVIDIA GeForce RTX 4090"
amd="hip 1 0000:03:00.0 gfx1201 AMD Radeon RX 9070 XT"
expect "-DSTRATA_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=89" "building the CUDA flavour for 89" \
  STRATA_WHICH_LINE="$nvidia" STRATA_NVCC="$work/fake-compiler"
expect "-DSTRATA_CUDA=OFF" "no CUDA toolkit" STRATA_WHICH_LINE="$nvidia" STRATA_NVCC="$work/missing"
expect "-DSTRATA_CUDA=OFF -DSTRATA_HIP=ON -DSTRATA_HIP_ARCHITECTURES=gfx1201 -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=$work/fake-compiler" \
  "building the HIP flavour for gfx1201" STRATA_WHICH_LINE="$amd" STRATA_HIP_CLANG="$work/fake-compiler" \
  STRATA_HIP_HEADER="$work/hip_runtime.h"
expect "-DSTRATA_CUDA=OFF" "no HIP toolchain" STRATA_WHICH_LINE="$amd" STRATA_HIP_CLANG="$work/fake-compiler" \
  STRATA_HIP_HEADER="$work/missing.h"
expect "-DSTRATA_CUDA=OFF" "no usable GPU" STRATA_WHICH_LINE="cpu"
# The real question, on this machine: whatever it has, the answer is one of the three flavours.
real=$(bash "$script" "$strata" 2>/dev/null)
[[ "$real" == "-DSTRATA_CUDA=OFF" || "$real" == *STRATA_CUDA=ON* || "$real" == *STRATA_HIP=ON* ]] || fail "real query: '$real'"
echo "gpu build flags: ok"
