#!/usr/bin/env bash
# End-to-end: `strata plan` on a test model — exit status (0 FITS, 2 DOES NOT FIT, 1 error), the
# bars, --json, --svg, a split over two GPUs (--vram A,B, --split-at), and clear errors for bad
# sizes. Usage: plan.sh <strata> <testdata-root>
set -euo pipefail
strata=$1
model=$2/models/qwen3moe.gguf
if [[ ! -f $model ]]; then
  echo "SKIP: test data missing ($model)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Fits: every expert resident, exit 0, bars drawn.
out=$("$strata" plan -m "$model" --vram 64MiB --vram-reserve 8MiB --ram 2GiB --ctx 512) || fail "fitting plan exited $?"
grep -q '^FITS$' <<<"$out" || fail "no FITS line: $out"
grep -q '^VRAM  \[' <<<"$out" || fail "no VRAM bar: $out"
grep -q '48 of 48 experts (100.0%)' <<<"$out" || fail "experts not all resident: $out"

# Does not fit: exit 2, the shortfall and suggestions.
set +e
out=$("$strata" plan -m "$model" --vram 1MiB --ram 2GiB --ctx 512 2>&1); rc=$?
set -e
[[ $rc == 2 ]] || fail "refusal exited $rc, expected 2"
grep -q 'DOES NOT FIT' <<<"$out" || fail "no refusal: $out"
grep -q 'short' <<<"$out" || fail "no shortfall named: $out"
grep -q -- '--vram 0' <<<"$out" || fail "no CPU suggestion: $out"

# --json is valid JSON with the numbers; --svg writes a drawing.
"$strata" plan -m "$model" --vram 64MiB --vram-reserve 8MiB --ram 2GiB --json --svg "$work/plan.svg" > "$work/plan.json" ||
  fail "json plan exited $?"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["fits"] is True, j; assert j["vram"]["expert_slots"] == 48, j' \
  "$work/plan.json" || fail "json"
grep -q '</svg>' "$work/plan.svg" || fail "svg not written"

# Two GPUs (--vram A,B): split by layers, one bar and one JSON entry per GPU, the layers covered
# once; --split-at moves the boundary; a split point past the layers is refused (exit 2).
"$strata" plan -m "$model" --vram 64MiB,64MiB --vram-reserve 8MiB --ram 2GiB --ctx 512 --json > "$work/split.json" ||
  fail "two-GPU plan exited $?"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); g=j["gpus"]; assert j["fits"] and len(g) == 2, j
assert g[0]["layer_begin"] == 0 and g[0]["layer_end"] == g[1]["layer_begin"] and g[1]["layer_end"] == 3, g
assert g[0]["expert_slots"] + g[1]["expert_slots"] == j["vram"]["expert_slots"], j' "$work/split.json" ||
  fail "two-GPU plan JSON"
out=$("$strata" plan -m "$model" --vram 64MiB,64MiB --vram-reserve 8MiB --ram 2GiB --ctx 512 --split-at 2) ||
  fail "--split-at 2 exited $?"
grep -q "layers 0–1" <<<"$out" && grep -q "layer 2$" <<<"$out" || fail "--split-at 2 not honoured: $out"
set +e
out=$("$strata" plan -m "$model" --vram 64MiB,64MiB --ram 2GiB --split-at 9 2>&1); rc=$?
set -e
[[ $rc == 2 ]] || fail "--split-at 9 exited $rc, expected 2"
grep -q -- "--split-at 9: expected 1 value(s) for 2 GPUs" <<<"$out" || fail "--split-at 9: $out"

# --split tensor: every GPU holds a part of every layer, the head on the first; bad values refused.
"$strata" plan -m "$model" --vram 64MiB,64MiB --vram-reserve 8MiB --ram 2GiB --ctx 512 --split tensor --json \
  > "$work/tensor.json" || fail "tensor-split plan exited $?"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); g=j["gpus"]; assert j["fits"] and len(g) == 2, j
assert j["request"]["split"] == "tensor", j["request"]
assert all(s["layer_begin"] == 0 and s["layer_end"] == 3 for s in g), g
assert g[0]["dense"] > g[1]["dense"], g' "$work/tensor.json" || fail "tensor-split plan JSON"
out=$("$strata" plan -m "$model" --vram 64MiB,64MiB --vram-reserve 8MiB --ram 2GiB --ctx 512 --split tensor) ||
  fail "tensor-split plan text exited $?"
grep -q "Split by tensor over 2 GPUs" <<<"$out" && grep -q "part 2 of 2 of every layer" <<<"$out" ||
  fail "tensor-split plan text: $out"
for args in "--split rows" "--split tensor" "--split tensor --vram 64MiB,64MiB --split-at 2"; do
  set +e
  err=$("$strata" plan -m "$model" $args 2>&1 >/dev/null); rc=$?
  set -e
  [[ $rc != 0 ]] || fail "plan $args must fail"
  grep -q 'expected' <<<"$err" || fail "plan $args: unclear error: $err"
done

# No --vram: a CPU-only plan.
"$strata" plan -m "$model" --ram 2GiB | grep -q 'VRAM   none' || fail "cpu-only plan"

# Bad sizes and types: exit 1, a message naming the flag and the input.
for args in "--vram 24XB" "--ram=-1G" "--vram-reserve 1.G" "--kv-type q4_0"; do
  set +e
  err=$("$strata" plan -m "$model" $args 2>&1 >/dev/null); rc=$?
  set -e
  [[ $rc == 1 ]] || fail "$args exited $rc, expected 1"
  grep -q 'expected' <<<"$err" || fail "$args: unclear error: $err"
done
err=$("$strata" plan -m "$model" --vram 24XB 2>&1 >/dev/null || true)
grep -q -- '--vram: size: expected .* got "24XB"' <<<"$err" || fail "--vram error: $err"
echo "plan.sh: all passed"
