#!/usr/bin/env bash
# End-to-end: `strata run --draft` on the built-in model writes the text plain decoding writes —
# greedy, and sampled with the same seed — with prompt lookup always on (lookup) and chosen online
# (auto), says on stderr how many drafts it accepted, and refuses a bad --draft with a clear error;
# `strata bench --draft` reports the acceptance and both speeds and finds the same tokens.
# Usage: speculative_run.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A prompt that repeats itself, so that lookup finds n-grams to draft from.
prompt="In the beginning God created the heaven and the earth. And God said, Let there be light: and there was light. In the beginning God"
for sampling in "--temp 0" "--temp 0.8 --seed 5 --repeat-penalty 1.1"; do
  # shellcheck disable=SC2086
  "$strata" run -m "$model" -p "$prompt" -n 120 -t 2 $sampling --draft none > "$work/plain.txt" 2> "$work/err.txt" ||
    fail "plain run: $(cat "$work/err.txt")"
  for mode in lookup auto; do
    # shellcheck disable=SC2086
    "$strata" run -m "$model" -p "$prompt" -n 120 -t 2 $sampling --draft $mode --draft-max 3 > "$work/$mode.txt" 2> "$work/$mode.err" ||
      fail "--draft $mode: $(cat "$work/$mode.err")"
    cmp -s "$work/plain.txt" "$work/$mode.txt" || fail "--draft $mode ($sampling) wrote other text: $(diff "$work/plain.txt" "$work/$mode.txt")"
    grep -q "^speculation: " "$work/$mode.err" || fail "--draft $mode: no speculation line on stderr: $(cat "$work/$mode.err")"
  done
  grep -Eq "^speculation: [1-9][0-9]* verification passes, [0-9]+ drafted, [1-9][0-9]* accepted" "$work/lookup.err" ||
    fail "--draft lookup accepted no draft: $(cat "$work/lookup.err")"
done

if "$strata" run -m "$model" -p "x" -n 2 --draft sometimes > /dev/null 2> "$work/err.txt"; then fail "--draft sometimes was taken"; fi
grep -q "expected none, lookup or auto" "$work/err.txt" || fail "--draft sometimes: unclear error: $(cat "$work/err.txt")"

"$strata" bench -m "$model" -p 0 -n 32 -r 1 -t 2 --no-bound --draft lookup --draft-accept 0.8 --json > "$work/bench.json" 2> "$work/err.txt" ||
  fail "bench --draft: $(cat "$work/err.txt")"
python3 - "$work/bench.json" <<'PY' || fail "bench --draft: $(cat "$work/bench.json")"
import json, sys
results = json.load(open(sys.argv[1]))["results"]
spec = [r for r in results if r["test"] == "tg32+draft"]
assert spec, "no tg32+draft result"
s = spec[0]["speculation"]
assert s["runs_with_other_tokens"] == 0, s
assert s["drafted"] > 0 and 0 < s["accepted"] <= s["drafted"], s
assert s["tokens_per_pass"] > 1, s
assert s["plain_tokens_per_second"] > 0 and s["speculative_tokens_per_second"] > 0, s
PY
echo "ok"
