#!/usr/bin/env bash
# `strata inspect` on every reference model (text and JSON), and a clear refusal of a truncated copy.
set -euo pipefail
strata="$1"
data="${STRATA_TESTDATA:-$2}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

models=("$data"/models/*.gguf)
[[ -e "${models[0]}" ]] || { echo "inspect: test data missing under $data, skipped"; exit 0; }
for m in "${models[@]}"; do
  [[ "$m" == *.ref.gguf ]] && continue
  "$strata" inspect "$m" >"$work/out" || { echo "inspect failed on $m"; exit 1; }
  arch=$("$strata" inspect --json "$m" | python3 -c 'import json,sys; print(json.load(sys.stdin)["architecture"])')
  grep -q "architecture  $arch" "$work/out" || { echo "$m: text and JSON disagree on the architecture"; exit 1; }
  grep -q "bytes per token" "$work/out" || { echo "$m: no byte summary"; exit 1; }
done

# MoE byte figures: qwen3moe has 16 experts, 4 used (PROVENANCE.md).
"$strata" inspect "$data/models/qwen3moe.gguf" | grep -q "16 experts per layer, 4 used per token" \
  || { echo "qwen3moe: wrong MoE summary"; exit 1; }

# A truncated copy: non-zero exit, and the message names the problem.
head -c 100000 "$data/models/qwen3moe.gguf" >"$work/truncated.gguf"
if "$strata" inspect "$work/truncated.gguf" >/dev/null 2>"$work/err"; then
  echo "a truncated file was accepted"; exit 1
fi
grep -q "is the file truncated" "$work/err" || { echo "unclear message:"; cat "$work/err"; exit 1; }
# --check-values: the built-in model is finite; a copy with one NaN weight in a norm is refused
# with the tensor and row named.
builtin="$(dirname "$0")/../../models/strata-kjv-moe.gguf"
"$strata" inspect "$builtin" --check-values | grep -q "values             finite in all" \
  || { echo "--check-values did not pass the built-in model"; exit 1; }
cp "$builtin" "$work/nan.gguf"
"$strata" inspect --json "$builtin" | python3 -c '
import json, struct, sys
t = next(t for t in json.load(sys.stdin)["tensors"] if t["name"] == "blk.2.ffn_norm.weight")
with open(sys.argv[1], "r+b") as f:
    f.seek(t["offset"] + 4 * 7)
    f.write(struct.pack("<f", float("nan")))' "$work/nan.gguf"
if "$strata" inspect "$work/nan.gguf" --check-values >/dev/null 2>"$work/err"; then
  echo "a NaN weight passed --check-values"; exit 1
fi
grep -q "blk.2.ffn_norm.weight: row 0, value 7 is NaN" "$work/err" \
  || { echo "unclear --check-values message:"; cat "$work/err"; exit 1; }
echo "inspect: ok"
