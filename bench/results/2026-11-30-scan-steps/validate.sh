#!/usr/bin/env bash
# Issue 9, the session's last code (the CPU lane's arithmetic moved to experts/cpu_expert_lane.cpp,
# one helper for the copies made ahead): the GPU suite, `strata parity --device gpu` on every
# fixture and with 2 slots, and the 10 GiB and every-expert-in-RAM scenarios once.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
bench_line b10 --device gpu -p 512 -n 128 -r 2 --vram-budget 10GiB
bench_line ram --device gpu -p 512 -n 128 -r 2 --expert-slots 0
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
