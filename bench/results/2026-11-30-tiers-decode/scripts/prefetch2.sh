#!/usr/bin/env bash
# Issue 9: the routing written to host memory by a kernel (no copy engine), experts copied ahead
# (--expert-prefetch N); the GPU tests first (the prefetch test under gdb when it fails).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]|gpu-tiers prefetch|CUDA failed" "$out/gpu_tests.txt" | head -12
if ! grep -q "PASSED" "$out/gpu_tests.txt"; then
  xz -dkf "$(dirname "$0")/strata_gpu_tests_debug.xz"; chmod +x "$(dirname "$0")/strata_gpu_tests_debug"
  (command -v gdb && gdb -batch -ex run -ex bt --args "$(dirname "$0")/strata_gpu_tests_debug" --gtest_filter='*Prefetch*') \
    > "$out/gdb.txt" 2>&1
  grep -E "^#|CUDA failed" "$out/gdb.txt" | head -30
fi
model=synth-qwen3-30b-a3b.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*experts://')"
}
for round in 1 2; do
  for pf in 0 1 2; do
    run "ram_pf${pf}_r$round" -p 0 -n 64 -r 3 --expert-slots 0 --expert-prefetch $pf
  done
done
for pf in 0 2; do run "b10_pf${pf}" -p 0 -n 64 -r 3 --vram-budget 10GiB --expert-prefetch $pf; done
parity_fixtures
