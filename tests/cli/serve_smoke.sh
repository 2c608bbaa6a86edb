#!/usr/bin/env bash
# End-to-end: the `strata serve` executable with curl, on a tiny synthetic model: it listens on
# loopback, reports loading/ready, answers a chat completion and a stream, refuses a bad API key,
# and on SIGTERM lets an in-flight stream finish before exiting 0.
# Usage: serve_smoke.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata="$1"
if ! command -v curl > /dev/null; then
    echo "SKIP: curl is not installed"
    exit 0
fi
source "$(dirname "$0")/lib/served.sh"

"$strata" synth --preset tiny --layers 2 -o "$work/tiny.gguf" 2> /dev/null
printf '%s' '{% for m in messages %}<{{ m.role }}>{{ m.content }}
{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}' > "$work/template.jinja"
printf 'smoke-key\n' > "$work/key"

"$strata" serve -m "$work/tiny.gguf" --chat-template "$work/template.jinja" --port 0 --api-key-file "$work/key" \
    --slots 2 --ctx-size 4096 -t 2 --drain-timeout 30 2> "$work/server.log" &
server_pid=$!

wait_for_port
auth=(-H "Authorization: Bearer smoke-key")

ready=""
for _ in $(seq 1 600); do
    if curl -sf "$base/health" | grep -q '"ready"'; then ready=1; break; fi
    sleep 0.1
done
[[ -n "$ready" ]] || fail "/health never said ready"

code=$(curl -s -o "$work/unauth.json" -w '%{http_code}' "$base/v1/models")
[[ $code == 401 ]] || fail "no key: expected 401, got $code"
grep -q '"invalid_api_key"' "$work/unauth.json" || fail "401 body is not an OpenAI error"

curl -sf "${auth[@]}" -H 'Content-Type: application/json' "$base/v1/chat/completions" \
    -d '{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"temperature":0,"ignore_eos":true}' > "$work/chat.json" \
    || fail "chat completion failed"
grep -q '"completion_tokens":5' "$work/chat.json" || fail "chat usage: $(cat "$work/chat.json")"
grep -q '"finish_reason":"length"' "$work/chat.json" || fail "chat finish_reason: $(cat "$work/chat.json")"

curl -sfN "${auth[@]}" -H 'Content-Type: application/json' "$base/v1/chat/completions" \
    -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true}' > "$work/stream.txt" \
    || fail "streamed chat failed"
[[ $(tail -c 14 "$work/stream.txt") == "data: [DONE]" ]] || [[ $(tail -n 2 "$work/stream.txt" | head -1) == "data: [DONE]" ]] \
    || fail "stream does not end with [DONE]: $(tail -c 200 "$work/stream.txt")"

# SIGTERM while a stream is in flight: it completes, then the server exits 0.
curl -sN "${auth[@]}" -H 'Content-Type: application/json' "$base/v1/completions" \
    -d '{"prompt":"drain me","max_tokens":1500,"stream":true,"ignore_eos":true}' > "$work/drain.txt" &
curl_pid=$!
for _ in $(seq 1 600); do  # up to 30 s on a loaded machine
    [[ -s "$work/drain.txt" ]] && break
    sleep 0.05
done
kill -"${STRATA_TEST_STOP_SIGNAL:-TERM}" "$server_pid"
wait "$curl_pid" || fail "the in-flight stream was cut off (curl exit $?): $(tail -c 300 "$work/drain.txt")"
grep -q 'data: \[DONE\]' "$work/drain.txt" || fail "the in-flight stream did not finish: $(tail -c 200 "$work/drain.txt")"
status=0
wait "$server_pid" || status=$?
server_pid=""
[[ $status == 0 ]] || fail "server exit status $status after SIGTERM"
grep -q "stopped" "$work/server.log" || fail "no clean stop in the log"
echo "OK"
