#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup; a bounded fuzz run of the parsers in a separate
# clang build (libFuzzer needs clang; only the parser layers are compiled into it); then a
# warnings-as-errors build; command 1 of the README (scripts/run.sh) without a terminal; and every
# ctest (unit, reference data, CLI and server end-to-end, and GPU tests, which skip cleanly without
# a GPU). Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=$(nproc)

cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DSTRATA_BUILD_FUZZ=ON -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF -DSTRATA_FUZZ_SECONDS=30
cmake --build build-fuzz -j "$jobs" --target gguf_parser_fuzz chat_template_fuzz
ctest --test-dir build-fuzz -R '^fuzz\.' --output-on-failure

cmake -S . -B build -G Ninja -DSTRATA_WERROR=ON
cmake --build build -j "$jobs"

# Command 1 of the README in its non-interactive form (no terminal): readable text must come out.
run_out=$(bash scripts/run.sh </dev/null 2>&1)
printf '%s\n' "$run_out" | tail -n 12
grep -qwE "the|and|unto|of" <<<"$run_out" || { echo "scripts/run.sh printed no text"; exit 1; }

ctest --test-dir build -j "$jobs" --output-on-failure
