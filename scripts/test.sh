#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup; a bounded fuzz run of the parsers in a separate
# clang build (libFuzzer needs clang; only the parser layers are compiled into it: GGUF, chat
# templates, OpenAI requests, tool calls); then a warnings-as-errors build (with CUDA when nvcc
# is present); command 1 of the README
# (scripts/run.sh) without a terminal; the HIP build and its no-device path; every ctest (unit,
# reference data, CLI and server end-to-end, and GPU tests, which skip cleanly without a GPU); and
# the Windows build with its tests under Wine. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# The AMD (HIP) flavour and the Windows build are built too, so their packages are part of the
# suite's setup.
STRATA_SETUP_HIP="${STRATA_SETUP_HIP:-1}" STRATA_SETUP_WINDOWS="${STRATA_SETUP_WINDOWS:-1}" bash scripts/setup.sh
jobs=$(nproc)

cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DSTRATA_BUILD_FUZZ=ON -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF -DSTRATA_FUZZ_SECONDS=30
cmake --build build-fuzz -j "$jobs" --target gguf_parser_fuzz chat_template_fuzz openai_request_fuzz tool_call_fuzz \
  tokenizer_fuzz
ctest --test-dir build-fuzz -R '^fuzz\.' --output-on-failure

cmake -S . -B build -G Ninja -DSTRATA_WERROR=ON
cmake --build build -j "$jobs"

# Command 1 of the README in its non-interactive form (no terminal): readable text must come out.
run_out=$(bash scripts/run.sh </dev/null 2>&1)
printf '%s\n' "$run_out" | tail -n 12
grep -qwE "the|and|unto|of" <<<"$run_out" || { echo "scripts/run.sh printed no text"; exit 1; }

# The HIP flavour (clang-19, gfx906 gfx1030 gfx1100 gfx1151 gfx1200 gfx1201; docs in
# cmake/StrataGpu.cmake): it must build, and without an AMD GPU say so and run on the CPU.
if [[ "${STRATA_SETUP_HIP:-1}" == "1" ]]; then
  cmake -S . -B build-hip -G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DSTRATA_HIP=ON -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF
  cmake --build build-hip -j "$jobs" --target strata
  build-hip/bin/strata devices
  data="${STRATA_TESTDATA:-../shared/testdata}"
  if [[ -f "$data/models/qwen3moe.gguf" ]]; then
    build-hip/bin/strata parity "$data/models/qwen3moe.gguf" "$data/models/qwen3moe.ref.gguf" --backend gpu
    build-hip/bin/strata parity "$data/models/qwen3moe.gguf" "$data/models/qwen3moe.ref.gguf" --backend cpu
  fi
fi

ctest --test-dir build -j "$jobs" --output-on-failure

# The Windows build (docs/WINDOWS.md): clang-19 for mingw-w64, its libraries built from Debian's
# sources; strata.exe under Wine must write the same text as the Linux build for a fixed seed; then
# every Windows test binary and CLI script under Wine (tests/windows_skips.txt names what is not
# run there, and why), and the release archive, unpacked and started as a user would.
if [[ "${STRATA_SETUP_WINDOWS:-1}" == "1" ]]; then
  bash scripts/windows_deps.sh build-windows-deps
  cmake -S . -B build-windows -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/windows/mingw-w64-x86_64.cmake \
    -DSTRATA_WINDOWS_PREFIX="$PWD/build-windows-deps/prefix" -DSTRATA_BUILD_BENCH=OFF
  cmake --build build-windows -j "$jobs" --target strata
  export WINEDEBUG=-all
  build-windows/bin/strata --version  # the first Wine process makes Wine's prefix (~/.wine)
  sample=(run -m models/strata-kjv-moe.gguf -p "And God said" -n 40 --seed 7 --temp 0.7)
  linux_text=$(build/bin/strata "${sample[@]}" 2> /dev/null)
  windows_text=$(build-windows/bin/strata "${sample[@]}" 2> /dev/null)
  if [[ "$linux_text" != "$windows_text" ]]; then
    printf 'strata.exe under Wine wrote other text than Linux:\n%s\n--- Linux:\n%s\n' "$windows_text" "$linux_text"
    exit 1
  fi
  echo "strata.exe under Wine: the same text as Linux for seed 7"
  started=$SECONDS
  cmake --build build-windows -j "$jobs"
  echo "Windows test binaries built in $((SECONDS - started)) s"
  started=$SECONDS
  ctest --test-dir build-windows -j "$jobs" --output-on-failure
  echo "Windows suite under Wine ran in $((SECONDS - started)) s"
  bash scripts/windows_release.sh build-windows
fi
