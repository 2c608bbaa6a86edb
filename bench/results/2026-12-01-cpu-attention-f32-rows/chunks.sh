#!/usr/bin/env bash
# Issue 4: CPU decode attention on 16 Xeon threads. New (BIN/strata): a decode step with more
# threads than kv heads computes chunks of 512 rows side by side, every query head of the group
# in one item; base (BIN/strata-base): the build before, whose items split the group's heads.
# Alternated: decode at depths 4096 and 8192 (with the CPU op profile) and at 0; then the GPU
# suite and every parity fixture (GPU and CPU) on the new build.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
cat "$model" > /dev/null
cpu() {  # name exe args...
  local name=$1 exe=$2; shift 2
  step "$name" 300 "$bin/$exe" bench -m "$model" --device cpu "$@"
  echo "$name: $(grep -E 'beside|^\|.*(tg|pp)[0-9]|attention' "$out/$name.txt" | tr -s ' ' | head -4 | tr '\n' ' ')"
}
for r in 1 2; do
  cpu d4096_new_r$r strata -p 0 -n 32 -r 2 -d 4096 --cpu-profile
  cpu d4096_base_r$r strata-base -p 0 -n 32 -r 2 -d 4096 --cpu-profile
done
cpu d8192_new strata -p 0 -n 32 -r 1 -d 8192 --cpu-profile
cpu d8192_base strata-base -p 0 -n 32 -r 1 -d 8192 --cpu-profile
cpu tg_new strata -p 0 -n 64 -r 3
cpu tg_base strata-base -p 0 -n 64 -r 3
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
  step "parity_cpu_$m" 120 "$bin/strata" parity --device cpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "FAIL|error" "$out/parity_cpu_$m.txt" | head -4
done
grep -l PASS "$out"/parity_*.txt | wc -l
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
