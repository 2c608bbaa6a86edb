#!/usr/bin/env bash
# Issues 4 and 9, the session's last code: the GPU suite, parity on every fixture (and with 2
# expert slots), every scenario of the README's table with uniform routing, and decode at 10 GiB
# and with every expert in RAM with skewed routing (--router-skew 1.0).
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
bench_env vram X=1 -- -p 512 -n 128 -r 2
bench_env vram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2
bench_env b16 X=1 -- -p 512 -n 128 -r 2 --vram-budget 16GiB
bench_env b10 X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
bench_env b10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
bench_env b2 X=1 -- -p 512 -n 128 -r 2 --vram-budget 2GiB
bench_env ram X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
bench_env ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
rm -f "$model"
model=${TMPDIR:-/tmp}/strata-synth-skew.gguf
synth_model --router-skew 1.0
cat "$model" > /dev/null
bench_env skew_b10 X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
bench_env skew_ram X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
