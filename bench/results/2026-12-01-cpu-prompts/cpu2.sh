#!/usr/bin/env bash
# Issue 4: CPU prompts on 16 Xeon threads, with the attention's items claimed longest first and the
# KV rows stored over the pool too (on top of cpu.sh's changes), against the code before this
# session's CPU work (BIN/strata-base), alternated; profiles; decode against the bound; the CPU
# suites on this build.
source "$(dirname "$0")/device_common.sh" "$@"
for s in backend model; do
  step "${s}_tests" 300 "$bin/strata_${s}_tests"
  tail -1 "$out/${s}_tests.txt"
done
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
cpu new_4096 strata -p 4096 -b 4096 -n 0 -r 1
cpu base_4096 strata-base -p 4096 -b 4096 -n 0 -r 1
cpu new_prof strata -p 512 -n 32 -r 1 --cpu-profile
cpu base_prof strata-base -p 512 -n 32 -r 1 --cpu-profile
grep -A14 "CPU op profile" "$out/new_prof.txt" "$out/base_prof.txt" | grep -E "pp512|attention|rms_norm|moe experts|rope|matmul|wall"
tar -C "$out" -czf TMP . && rm -f "$out"/*.txt && mv TMP "$out/"
