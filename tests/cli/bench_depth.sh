#!/usr/bin/env bash
# End-to-end: `strata bench -d` on the built-in model names its tests as llama-bench does
# ("pp16 @ d32"), reports the depth in --json, and refuses a negative depth; -p and -n take
# comma-separated lists as llama-bench's do.
# Usage: bench_depth.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model"

out=$("$strata" bench -m "$model" --device cpu -p 16 -n 4 -r 1 -d 32 -t 2 --json --no-bound)
python3 - "$out" <<'PY' || fail "unexpected bench JSON: $out"
import json, sys
j = json.loads(sys.argv[1])
tests = [r["test"] for r in j["results"]]
assert tests == ["pp16 @ d32", "tg4 @ d32"], tests
assert all(r["depth"] == 32 and r["tokens_per_second"] > 0 for r in j["results"])
PY
text=$("$strata" bench -m "$model" --device cpu -p 8 -n 0 -r 1 -d 8 -t 2 --no-bound)
grep -q "pp8 @ d8" <<<"$text" || fail "text output lacks 'pp8 @ d8': $text"
if "$strata" bench -m "$model" --device cpu -p 8 -n 0 -d -5 >/dev/null 2>&1; then fail "a negative depth was accepted"; fi
lists=$("$strata" bench -m "$model" --device cpu -p 8,16 -n 2,4 -r 1 -t 2 --json --no-bound)
python3 - "$lists" <<'PY' || fail "comma-separated -p/-n lists not run as four tests: $lists"
import json, sys
tests = [r["test"] for r in json.loads(sys.argv[1])["results"]]
assert tests == ["pp8", "pp16", "tg2", "tg4"], tests
PY
echo "bench depth: ok"
