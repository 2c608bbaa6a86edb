#!/usr/bin/env bash
# Issue 9: where the tiers' decode chain goes (lane end -> next routing). Validation of HEAD first
# (GPU suite, parity), then with every expert in RAM: baselines, GPU clocks sampled during decode,
# and each chain op muted in turn (STRATA_GPU_ABLATE, a timing study).
source "$(dirname "$0")/device_common.sh" "$@"
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
parity_fixtures
for m in qwen3moe deepseek3; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
smi() { env -u LD_LIBRARY_PATH nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv,noheader -lms 100 > "$out/clocks_$1.txt" 2>&1 & smi_pid=$!; }
smi vram; bench_env vram X=1 -- -p 0 -n 256 -r 1; kill $smi_pid
smi ram; bench_env ram X=1 -- -p 0 -n 256 -r 1 --expert-slots 0; kill $smi_pid
for r in 1 2; do
  bench_env ram_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env b10_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  for op in "matmul attn_qkv" "qk_norm_rope_store" "attention" "quantize_q8" "matmul attn_output" "add_rms_norm ffn_norm" "moe_predict_next"; do
    bench_env "mute_${op// /_}_r$r" "STRATA_GPU_ABLATE=$op" -- -p 0 -n 64 -r 2 --expert-slots 0
  done
  bench_env extra2_r$r STRATA_GPU_EXTRA_LAUNCHES=2 -- -p 0 -n 64 -r 2 --expert-slots 0
done
tar -C "$out" -czf TMP . && rm -f "$out"/*.txt && mv TMP "$out/"
