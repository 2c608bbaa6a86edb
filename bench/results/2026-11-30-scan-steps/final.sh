#!/usr/bin/env bash
# Issue 9, the final code on one start of the machine: every scenario of the README's table
# (pp512, pp4096, tg128), the LFU policy's decode at 10 GiB, one timeline (the diagnostic works),
# `strata parity --device gpu` on every fixture and with 2 slots, and the GPU suite.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -8 | tr '\n' ' ')"
}
gpu vram X=1 -- -p 512 -n 128 -r 2
gpu vram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2
gpu b16 X=1 -- -p 512 -n 128 -r 2 --vram-budget 16GiB
gpu b10 X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
gpu b10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
gpu b10_lfu X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB --expert-policy lfu
gpu b2 X=1 -- -p 512 -n 128 -r 2 --vram-budget 2GiB
gpu ram X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
gpu ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
gpu timeline STRATA_TIERS_TIMELINE=2 -- -p 512 -n 0 -r 2 --vram-budget 10GiB
echo "timeline rows: $(grep -c '^timeline' "$out/timeline.txt")"
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
