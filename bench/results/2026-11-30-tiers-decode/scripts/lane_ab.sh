#!/usr/bin/env bash
# Issue 9: the CPU lane on its own thread (B = $bin/strata) against the previous code (A =
# $bin/strata-base), alternated on one model; then the GPU tests and parity with a tiny expert cache.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=synth-qwen3-30b-a3b.gguf
synth_model
ab() {  # name args...
  local name=$1; shift
  for round in $(seq 1 ${ROUNDS:-3}); do
    for v in base new; do
      local exe=$bin/strata; [[ $v == base ]] && exe=$bin/strata-base
      step "${name}_${v}_r$round" 300 "$exe" bench -m "$model" --device gpu "$@"
      echo "$v r$round: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/${name}_${v}_r$round.txt" | tr -s ' ' | head -2 | tr '\n' ' ')"
      grep -E "experts:" "$out/${name}_${v}_r$round.txt" | tail -1
    done
  done
}
ab ram -p 0 -n 64 -r 3 --expert-slots 0
ROUNDS=1 ab ram_pp -p 512 -n 0 -r 2 --expert-slots 0
ab b10 -p 0 -n 64 -r 3 --vram-budget 10GiB
ROUNDS=1 ab vram -p 0 -n 128 -r 3
step gpu_tests 420 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|SKIPPED \]" "$out/gpu_tests.txt" | head -10
for m in qwen3moe mixtral gptoss; do
  step "parity_tiny_$m" 180 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error|nmse" "$out/parity_tiny_$m.txt" | head -4
done
parity_fixtures
