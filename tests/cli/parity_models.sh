#!/usr/bin/env bash
# `strata parity` on every reference model in both modes (batch and token-by-token decode), as a
# user would run it, with the f32, f16 and q8_0 KV caches (`--kv-type`); plus the GPU backend, which
# must pass on a GPU machine and skip (exit 0) elsewhere. Thresholds are the command's defaults
# (NMSE 1e-4, top-1 90%). Also the model read into memory (`--load memory`).
set -euo pipefail
strata="$1"
data="${STRATA_TESTDATA:-$2}"
refs=("$data"/models/*.ref.gguf)
[[ -e "${refs[0]}" ]] || { echo "parity: test data missing under $data, skipped"; exit 0; }
for ref in "${refs[@]}"; do
  model="${ref%.ref.gguf}.gguf"
  "$strata" parity "$model" "$ref" --mode both -t 2                 # the f16 KV cache (default)
  "$strata" parity "$model" "$ref" --mode both -t 2 --kv-type f32
  # The q8_0 cache where the heads are whole 32-value blocks (its rounding, ~1e-2 per element,
  # moves the logits more than f16's: the NMSE limit is 3e-4); elsewhere a clear refusal.
  if ! out=$("$strata" parity "$model" "$ref" --mode both -t 2 --kv-type q8_0 --max-nmse 3e-4 2>&1); then
    [[ $out == *"are not whole 32-value blocks; use --kv-type f16"* ]] || { echo "FAIL: q8_0 on $model: $out" >&2; exit 1; }
  fi
  printf '%s\n' "$out" | tail -2
done
# A KV type the CPU does not have is refused, naming the ones it has.
if out=$("$strata" parity "${refs[0]%.ref.gguf}.gguf" "${refs[0]}" --kv-type q4 2>&1); then
  echo "FAIL: --kv-type q4 must fail" >&2; exit 1
fi
[[ $out == *"expected f16, f32 or q8_0"* ]] || { echo "FAIL: --kv-type q4: $out" >&2; exit 1; }
# The model read into memory (--load memory) and mapped (--load mmap) both pass; a bad mode is refused.
"$strata" parity "$data/models/qwen3moe.gguf" "$data/models/qwen3moe.ref.gguf" --mode both -t 2 --load memory
"$strata" parity "$data/models/qwen3moe.gguf" "$data/models/qwen3moe.ref.gguf" --mode both -t 2 --load mmap
if out=$("$strata" parity "$data/models/qwen3moe.gguf" "$data/models/qwen3moe.ref.gguf" --load disk 2>&1); then
  echo "FAIL: --load disk must fail" >&2; exit 1
fi
[[ $out == *"--load: expected auto, mmap or memory"* ]] || { echo "FAIL: --load disk: $out" >&2; exit 1; }
"$strata" parity "$data/models/qwen3moe.gguf" "$data/models/qwen3moe.ref.gguf" --backend gpu --mode both
