#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build Strata, and run it on the built-in
# model (models/strata-kjv-moe.gguf, a small Qwen3-MoE the project trained on the King James
# Bible; tools/builtin_model/ remakes it): a plain continuation, then a chat turn, then — when
# this runs in a terminal — an interactive `strata chat`.
# Usage: scripts/run.sh [PROMPT]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# A CPU-only strata first (an existing build/ keeps its configuration): it finds the GPU that is
# really here without any GPU toolkit, and scripts/gpu_build_flags.sh turns what it found into the
# one flavour worth building (CUDA or HIP for that card's architecture), or says why not.
[[ -f build/CMakeCache.txt ]] || cmake -S . -B build -G Ninja -DSTRATA_CUDA=OFF
cmake --build build -j "$(nproc)" --target strata
bin=build/bin
read -r -a gpu_flags <<<"$(bash scripts/gpu_build_flags.sh build/bin/strata)"
if [[ "${gpu_flags[*]}" != "-DSTRATA_CUDA=OFF" ]]; then
  cmake -S . -B build-gpu -G Ninja "${gpu_flags[@]}" -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF
  cmake --build build-gpu -j "$(nproc)" --target strata
  bin=build-gpu/bin
fi

model=models/strata-kjv-moe.gguf
prompt=${1:-"And God said"}
echo "== strata run -m $model -p \"$prompt\""
"$bin/strata" run -m "$model" -p "$prompt" -n 120 --temp 0.7
echo
echo "== strata run -m $model --chat -p \"Psalms 23:1\"   (ask for a verse by its reference)"
"$bin/strata" run -m "$model" --chat -p "Psalms 23:1" -n 120 --temp 0.7
if [[ -t 0 && -t 1 ]]; then
  echo
  echo "== strata chat -m $model   (type a verse reference such as \"John 3:16\"; /exit ends)"
  "$bin/strata" chat -m "$model" -c 512 -n 120 --temp 0.7
fi
