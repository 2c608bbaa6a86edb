#!/usr/bin/env bash
# End-to-end: `strata loadgen` against `strata serve` on a tiny synthetic model: two load levels,
# every request answered with max_tokens tokens and no errors, the JSON form, and clear failures
# for an unreachable server and a bad URL.
# Usage: loadgen.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata="$1"
source "$(dirname "$0")/lib/served.sh"

"$strata" synth --preset tiny --layers 2 -o "$work/tiny.gguf" 2> /dev/null
printf '%s' '{% for m in messages %}<{{ m.role }}>{{ m.content }}
{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}' > "$work/template.jinja"
printf 'load-key\n' > "$work/key"
"$strata" serve -m "$work/tiny.gguf" --chat-template "$work/template.jinja" --port 0 --api-key-file "$work/key" \
    --slots 2 --ctx-size 2048 -t 2 2> "$work/server.log" &
server_pid=$!

wait_for_port
url=$base

# The server may still be loading: loadgen's health probe only needs it to answer.
"$strata" loadgen --url "$url" --api-key-file "$work/key" --clients 1,3 --requests-per-client 2 --max-tokens 4 \
    > "$work/table.txt" 2> "$work/loadgen.err" || fail "loadgen failed: $(cat "$work/loadgen.err")"
cat "$work/table.txt"
# Rows: | clients | requests | errors | tokens | ...
grep -Eq '^\| +1 \| +2 \| +0 \| +8 \|' "$work/table.txt" || fail "1-client row: $(cat "$work/table.txt")"
grep -Eq '^\| +3 \| +6 \| +0 \| +24 \|' "$work/table.txt" || fail "3-client row: $(cat "$work/table.txt")"

"$strata" loadgen --url "$url" --api-key-file "$work/key" --clients 2 --requests-per-client 1 --max-tokens 3 --json \
    > "$work/levels.json" || fail "loadgen --json failed"
grep -q '"completion_tokens": 6' "$work/levels.json" || fail "json: $(cat "$work/levels.json")"
grep -q '"errors": 0' "$work/levels.json" || fail "json errors: $(cat "$work/levels.json")"

# Without the key every request is refused: counted as errors, exit status 1, the reason shown.
if "$strata" loadgen --url "$url" --clients 1 --requests-per-client 1 --max-tokens 2 > "$work/nokey.txt" 2> "$work/nokey.err"; then
    fail "requests without the key did not fail the run"
fi
grep -q 'HTTP 401' "$work/nokey.err" || fail "no 401 reason: $(cat "$work/nokey.err")"

kill "$server_pid"
wait "$server_pid" 2> /dev/null || true
server_pid=""

# Nothing listens there any more.
if "$strata" loadgen --url "$url" --clients 1 > /dev/null 2> "$work/down.err"; then fail "loadgen succeeded without a server"; fi
grep -q 'cannot reach' "$work/down.err" || fail "unreachable: $(cat "$work/down.err")"
if "$strata" loadgen --url "https://example" > /dev/null 2> "$work/url.err"; then fail "https URL accepted"; fi
grep -q 'only http://host:port' "$work/url.err" || fail "bad URL: $(cat "$work/url.err")"
echo "loadgen: ok"
