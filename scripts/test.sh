#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup; a bounded fuzz run of the parsers in a separate
# clang build (libFuzzer needs clang; only the parser layers are compiled into it); then a
# warnings-as-errors build and every ctest (unit, reference data, CLI end-to-end, and GPU tests,
# which skip cleanly without a GPU). Usage: scripts/test.sh
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
ctest --test-dir build -j "$jobs" --output-on-failure
