#!/usr/bin/env bash
# End-to-end: `strata profile` on the built-in model (6 MoE layers of 8 experts, 2 used) over a
# three-line prompt file writes a profile that parses, describes the model, and whose every
# layer's counts add up to tokens × 2; a JSONL chat prompt works too, and a dense model is
# refused with a clear message. Everything is written to a temporary folder.
# Usage: profile.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
data="${STRATA_TESTDATA:-${2:-}}"
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model (see tools/builtin_model/README.md)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%s\n' "In the beginning God created the heaven and the earth." \
  "The LORD is my shepherd; I shall not want." \
  "And God said, Let there be light: and there was light." >"$work/prompts.txt"
"$strata" profile -m "$model" --prompts "$work/prompts.txt" -o "$work/profile.json" -n 4 -t 2 \
  >"$work/out" 2>"$work/err" || { cat "$work/err"; fail "strata profile failed"; }
grep -q "profile: 3/3 prompts" "$work/err" || { cat "$work/err"; fail "no final progress line"; }
grep -q "covers 90%" "$work/out" || { cat "$work/out"; fail "no summary"; }

check_profile() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
prompts = int(sys.argv[2])
assert p["format"] == "strata-expert-profile" and p["version"] == 1, "format/version"
m = p["model"]
assert (m["architecture"], m["n_layer"], m["n_expert"], m["n_expert_used"]) == ("qwen3moe", 6, 8, 2), m
assert p["prompts"] == prompts, p["prompts"]
assert p["tokens"] > 0 and 0 <= p["generated_tokens"] <= p["tokens"]
assert [L["layer"] for L in p["layers"]] == list(range(6)), "layers"
for L in p["layers"]:
    assert len(L["counts"]) == 8, L
    assert sum(L["counts"]) == p["tokens"] * 2, (L, p["tokens"])
EOF
}
check_profile "$work/profile.json" 3 || fail "the profile does not describe the run"

# JSONL with a plain prompt and a chat turn (rendered with the model's template).
printf '%s\n' '{"prompt": "In the beginning"}' \
  '{"messages": [{"role": "user", "content": "Psalms 23:1"}]}' >"$work/prompts.jsonl"
"$strata" profile -m "$model" --prompts "$work/prompts.jsonl" -o "$work/chat.json" -t 2 >/dev/null 2>"$work/err" \
  || { cat "$work/err"; fail "strata profile failed on JSONL"; }
check_profile "$work/chat.json" 2 || fail "the JSONL profile does not describe the run"

# A malformed JSONL line is refused with its line number.
printf '%s\n' '{"prompt": "ok"}' '{"messages": 3}' >"$work/bad.jsonl"
if "$strata" profile -m "$model" --prompts "$work/bad.jsonl" -o "$work/bad.json" 2>"$work/err" >/dev/null; then
  fail "a malformed prompt file was accepted"
fi
grep -q "bad.jsonl line 2" "$work/err" || { cat "$work/err"; fail "unclear message"; }

# A dense model has no experts to profile.
if [[ -n $data && -f $data/models/qwen3.gguf ]]; then
  if "$strata" profile -m "$data/models/qwen3.gguf" --prompts "$work/prompts.txt" -o "$work/dense.json" \
       2>"$work/err" >/dev/null; then
    fail "a dense model was profiled"
  fi
  grep -q "not a MoE model" "$work/err" || { cat "$work/err"; fail "unclear message for a dense model"; }
fi
echo "profile: ok"
