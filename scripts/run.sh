#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build Strata, and run it on a model it makes
# itself. Until the CPU engine lands this writes a tiny synthetic Qwen3-MoE-shaped model and shows
# what `strata inspect` sees in it; afterwards it will start `strata chat` on the built-in model.
# Usage: scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -G Ninja
cmake --build build -j "$(nproc)" --target strata

model=build/models/synth-tiny.gguf
mkdir -p build/models
if [[ ! -f "$model" ]]; then
  build/bin/strata synth --preset tiny -o "$model"
fi
build/bin/strata inspect "$model"
