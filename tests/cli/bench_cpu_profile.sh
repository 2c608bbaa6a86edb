#!/usr/bin/env bash
# End-to-end: `strata bench --cpu-profile` on the built-in model reports, per test, the CPU
# forward's ops (matmul, attention, norms, the MoE routing) with calls and milliseconds per token,
# whose sum stays within the wall time, in --json and as a table; without the flag there is none.
# Usage: bench_cpu_profile.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model"

out=$("$strata" bench -m "$model" --device cpu -p 16 -n 4 -r 1 -t 2 --json --no-bound --cpu-profile)
python3 - "$out" <<'PY' || fail "unexpected --cpu-profile JSON: $out"
import json, sys
j = json.loads(sys.argv[1])
for r in j["results"]:
    p = r["cpu_profile"]
    ops = {o["op"]: o for o in p["ops"]}
    for name in ("matmul", "attention (KV store, attend)", "rms_norm", "moe routing", "moe experts (gather, sum)"):
        assert name in ops, (r["test"], name, sorted(ops))
        assert ops[name]["calls_per_token"] > 0 and ops[name]["ms_per_token"] >= 0, ops[name]
    # Exclusive times: their sum is part of the wall time, never more.
    assert 0 < p["kernel_ms_per_token"] <= p["wall_ms_per_token"] * 1.001, p
PY
text=$("$strata" bench -m "$model" --device cpu -p 8 -n 0 -r 1 -t 2 --no-bound --cpu-profile)
grep -q "CPU op profile" <<<"$text" || fail "no profile table: $text"
grep -q "between the ops" <<<"$text" || fail "the table lacks the rest of the wall time: $text"
plain=$("$strata" bench -m "$model" --device cpu -p 8 -n 0 -r 1 -t 2 --json --no-bound)
python3 - "$plain" <<'PY' || fail "a profile without --cpu-profile: $plain"
import json, sys
assert all("cpu_profile" not in r for r in json.loads(sys.argv[1])["results"])
PY
echo "bench cpu profile: ok"
