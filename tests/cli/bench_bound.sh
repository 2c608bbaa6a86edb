#!/usr/bin/env bash
# End-to-end: `strata bench` on the CPU sets tg runs against the memory-bandwidth bound twice: the
# probe before all tests (bound_tokens_per_second, ratio_to_bound) and the probe beside each
# repetition (before it and after it: one pass more than repetitions), with a ratio per
# repetition and their median; the text table prints both. pp runs and --no-bound have neither.
# The probe reports which prefetch window gave its best pass.
# Usage: bench_bound.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model"

out=$("$strata" bench -m "$model" --device cpu -p 8 -n 4 -r 2 -t 2 --json)
python3 - "$out" <<'PY' || fail "unexpected bound JSON: $out"
import json, sys
j = json.loads(sys.argv[1])
pp, tg = j["results"]
assert j["memory_bandwidth"]["prefetch_bytes"] in (0, 2048, 4096), j["memory_bandwidth"]
assert "bound_tokens_per_second" not in pp and "beside" not in pp, pp
assert tg["bound_tokens_per_second"] > 0 and tg["bytes_per_token"] > 0, tg
b = tg["beside"]
assert len(b["probe_bytes_per_second"]) == 3 and all(p > 0 for p in b["probe_bytes_per_second"]), b
assert len(b["bound_tokens_per_second"]) == 2 and len(b["ratio_to_bound"]) == 2, b
for i, (rate, bound, ratio) in enumerate(zip(tg["samples"], b["bound_tokens_per_second"], b["ratio_to_bound"])):
    beside = max(b["probe_bytes_per_second"][i], b["probe_bytes_per_second"][i + 1])
    assert abs(bound - beside / tg["bytes_per_token"]) <= 1e-9 * bound, (bound, beside)
    assert abs(ratio - rate / bound) <= 1e-9 * ratio, (ratio, rate, bound)
assert abs(b["median_ratio"] - sum(b["ratio_to_bound"]) / 2) <= 1e-9 * b["median_ratio"], b
PY
text=$("$strata" bench -m "$model" --device cpu -p 0 -n 4 -r 3 -t 2)
grep -q "beside each repetition: bound" <<<"$text" || fail "no line for the bound beside each repetition: $text"
plain=$("$strata" bench -m "$model" --device cpu -p 0 -n 4 -r 1 -t 2 --json --no-bound)
python3 - "$plain" <<'PY' || fail "a bound with --no-bound: $plain"
import json, sys
r = json.loads(sys.argv[1])["results"][0]
assert "beside" not in r and "bound_tokens_per_second" not in r, r
PY
echo "bench bound: ok"
