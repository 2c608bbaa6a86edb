#!/usr/bin/env bash
# Issue 32 on the device, second run: the single-thread dot kernels of every type at AVX-512 (in
# cache and streamed), then decode with the routed experts in the asked type:
#  - on the CPU alone (16 threads), the synthetic Qwen3-30B-A3B cut to 8 layers, with the bound
#    that `strata bench` measures beside each repetition: Q4_K/Q6_K experts (the preset), IQ2_XXS,
#    Q2_0;
#  - every expert in RAM (--expert-slots 0), all 48 layers, GPU + CPU lane: Q4_K/Q6_K and IQ2_XXS.
# Usage (repo root on the device): bench/results/2026-12-01-new-quant-types/device_decode.sh OUT BIN TESTDATA
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
step dot_bench 300 "$bin/quant_dot_bench" --benchmark_filter='avx512|bandwidth' --benchmark_min_time=0.1
grep -E "dot/|read_" "$out/dot_bench.txt" | awk '{print $1, $NF}'
vocab="$data/vocab/ggml-vocab-llama-spm.gguf"
for t in preset IQ2_XXS Q2_0; do
  model=${TMPDIR:-/tmp}/synth8-$t.gguf
  flags=(); [[ $t != preset ]] && flags=(--expert-type "$t")
  step "synth8_$t" 300 "$bin/strata" synth --preset qwen3-30b-a3b --layers 8 --vocab "$vocab" -o "$model" "${flags[@]}"
  cat "$model" > /dev/null
  step "cpu_tg_$t" 300 "$bin/strata" bench -m "$model" --device cpu -p 0 -n 32 -r 3
  echo "cpu $t: $(grep -E 'beside|^\|.*tg32' "$out/cpu_tg_$t.txt" | tr -s ' ' | tr '\n' ' ')"
  rm -f "$model"
done
for t in preset IQ2_XXS; do
  model=${TMPDIR:-/tmp}/synth48-$t.gguf
  flags=(); [[ $t != preset ]] && flags=(--expert-type "$t")
  step "synth48_$t" 300 "$bin/strata" synth --preset qwen3-30b-a3b --vocab "$vocab" -o "$model" "${flags[@]}"
  cat "$model" > /dev/null
  step "ram_tg_$t" 300 "$bin/strata" bench -m "$model" --device gpu --expert-slots 0 -p 0 -n 64 -r 2
  echo "experts in RAM $t: $(grep -E '^\|.*tg64|experts:|lane' "$out/ram_tg_$t.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
  rm -f "$model"
done
tar -C "$out" -czf /tmp/logs.tar.gz . && find "$out" -name '*.txt' -delete && mv /tmp/logs.tar.gz "$out/"
