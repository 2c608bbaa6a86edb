#!/usr/bin/env bash
# Issue 4: CPU prompts on 16 Xeon threads, this session's CPU changes (row ops over the pool, the
# attention's softmax eight lanes at a time, its weighted sum in registers, dot products eight rows
# at a time) against the code before them (BIN/strata-base), alternated; the profile of each; the
# GPU suite, parity and the CPU suites on this build; the tiers' prompt with every expert in RAM.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
for s in backend model experts; do
  step "${s}_tests" 300 "$bin/strata_${s}_tests"
  tail -1 "$out/${s}_tests.txt"
done
parity_fixtures
model=${TMPDIR:-/tmp}/strata-synth.gguf
layers=8 synth_model
cat "$model" > /dev/null
cpu() {  # name exe args...
  local name=$1 exe=$2; shift 2
  step "$name" 300 "$bin/$exe" bench -m "$model" --device cpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -3 | tr '\n' ' ')"
}
for r in 1 2 3; do
  cpu new_r$r strata -p 512 -n 0 -r 2
  cpu base_r$r strata-base -p 512 -n 0 -r 2
done
cpu new_prof strata -p 512 -n 32 -r 1 --cpu-profile
cpu base_prof strata-base -p 512 -n 32 -r 1 --cpu-profile
grep -A14 "CPU op profile" "$out/new_prof.txt" "$out/base_prof.txt" | grep -E "pp512|attention|rms_norm|moe experts|rope|matmul|wall"
model=${TMPDIR:-/tmp}/strata-synth48.gguf
layers=48 synth_model
cat "$model" > /dev/null
bench_env ram_pp X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
tar -C "$out" -czf TMP . && rm -f "$out"/*.txt && mv TMP "$out/"
