#!/usr/bin/env bash
# Issue 9: the expert tiers split into files (no behaviour change intended). The GPU suite and
# parity on the new code, then the new binary against the previous session's last one (OLD_BIN),
# alternated: every expert in RAM (tg128, pp512) and a 10 GiB budget (tg128).
source "$(dirname "$0")/device_common.sh" "$@"
old_bin=${extra[0]:?OLD_BIN}
new_bin=$bin
model=${TMPDIR:-/tmp}/strata-synth.gguf
grep -o -w 'avx512[a-z_0-9]*\|amx[a-z_0-9]*\|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ' > "$out/cpu_flags.txt"; cat "$out/cpu_flags.txt"; echo
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
synth_model
cat "$model" > /dev/null
for r in 1 2 3; do
  bin=$new_bin; bench_env ram_new_r$r X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
  bin=$old_bin; bench_env ram_old_r$r X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
done
for r in 1 2; do
  bin=$new_bin; bench_env b10_new_r$r X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
  bin=$old_bin; bench_env b10_old_r$r X=1 -- -p 512 -n 128 -r 2 --vram-budget 10GiB
done
bin=$new_bin
bench_env b16 X=1 -- -p 512 -n 128 -r 2 --vram-budget 16GiB
bench_env vram X=1 -- -p 512 -n 128 -r 2
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
