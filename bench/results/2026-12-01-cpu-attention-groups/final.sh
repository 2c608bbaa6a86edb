#!/usr/bin/env bash
# The session's last code on the GPU machine: the GPU suite, GPU parity on every fixture and with
# 2 expert slots on the MoE ones (the CPU lane computes most experts), CPU parity on every
# fixture (the grouped attention), and CPU decode on 16 threads at depth 0 and 4096.
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
  step "parity_cpu_$m" 120 "$bin/strata" parity --device cpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "FAIL|error" "$out/parity_cpu_$m.txt" | head -4
done
grep -l PASS "$out"/parity_*.txt | wc -l
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
cat "$model" > /dev/null
step cpu_tg 300 "$bin/strata" bench -m "$model" --device cpu -p 0 -n 64 -r 3
step cpu_d4096 300 "$bin/strata" bench -m "$model" --device cpu -p 0 -n 32 -r 2 -d 4096
grep -hE "tg|beside" "$out/cpu_tg.txt" "$out/cpu_d4096.txt"
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
