#!/usr/bin/env bash
# The engine survives (server/supervisor.h): `strata serve` on the built-in model, its engine
# child killed mid-stream, stopped (a hang: the watchdog must kill it), sent SIGSEGV while a
# request waits on it. Each time the request in flight gets a clear error in its API's shape (an
# error event closing a stream, a 500 otherwise), the old process is gone before a new one
# serves, the same port answers again, /health and /metrics count the restarts, and no second
# engine is left running. Ordering is by events, not by time: the engine is stopped (SIGSTOP)
# before it is killed, so a stream cannot finish in between.
# Usage: serve_supervisor.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata="$1"
for tool in curl python3; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 0; }
done
[[ $(uname) == Linux ]] || { echo "SKIP: the supervisor test reads /proc"; exit 0; }
source "$(dirname "$0")/lib/served.sh"

"$strata" serve --port 0 --ctx-size 2048 -t 2 --watchdog 5 2> "$work/server.log" &
server_pid=$!
wait_for_port

health_field() { curl -s "$base/health" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$1', ''))" 2> /dev/null || true; }
engines() { pgrep -P "$server_pid" | wc -l; }
# The old engine is gone (reaped: not even a zombie) and exactly one engine runs.
check_replaced() {  # old_pid new_pid
    [[ $1 != "$2" ]] || fail "the engine pid did not change ($1)"
    [[ ! -e /proc/$1 ]] || fail "the old engine $1 is still there: $(cat /proc/$1/status | head -3)"
    [[ $(engines) == 1 ]] || fail "$(engines) engine processes under the supervisor"
}
chat='{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2000,"ignore_eos":true'

# 1. Killed mid-stream: the stream ends with an error event, not [DONE].
pid1=$(wait_engine_ready 0)
curl -sN "$base/v1/chat/completions" -H 'Content-Type: application/json' -d "$chat,\"stream\":true}" > "$work/stream.txt" &
curl_pid=$!
for _ in $(seq 1 600); do grep -q '"delta"' "$work/stream.txt" 2> /dev/null && break; sleep 0.05; done
grep -q '"delta"' "$work/stream.txt" || fail "the stream never started"
kill -STOP "$pid1"
kill -KILL "$pid1"
wait "$curl_pid" || fail "curl failed on the broken stream"
tail -n 3 "$work/stream.txt" | grep -q '"code":"engine_failed"' || fail "the stream did not end with an error event: $(tail -c 400 "$work/stream.txt")"
! grep -q '\[DONE\]' "$work/stream.txt" || fail "a broken stream said [DONE]"
pid2=$(wait_engine_ready 1)
check_replaced "$pid1" "$pid2"
grep -q "the engine stopped (killed by signal 9 (SIGKILL))" "$work/server.log" || fail "no log line says why the engine stopped"
echo "killed mid-stream: error event, engine $pid1 -> $pid2"

# 2. A hang: the engine stopped (SIGSTOP) with a request waiting on it; the watchdog (5 s) kills it
# and the request gets a 500 in Anthropic's shape.
kill -STOP "$pid2"
code=$(curl -s -o "$work/messages.json" -w '%{http_code}' "$base/v1/messages" -H 'Content-Type: application/json' \
    -d '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"Hi"}]}')
[[ $code == 500 ]] || fail "a request to a hung engine got $code: $(cat "$work/messages.json")"
python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['type']=='error' and b['error']['type']=='api_error', b" "$work/messages.json" ||
    fail "not an Anthropic error: $(cat "$work/messages.json")"
pid3=$(wait_engine_ready 2)
check_replaced "$pid2" "$pid3"
grep -q "did not answer for longer than --watchdog 5 s" "$work/server.log" || fail "the watchdog did not say why it killed the engine"
echo "hung engine: watchdog kill, Anthropic 500, engine $pid2 -> $pid3"

# 3. A crash (SIGSEGV) while a non-streamed OpenAI request is being answered: a 500 in OpenAI's shape.
curl -s -o "$work/chat.json" -w '%{http_code}' "$base/v1/chat/completions" -H 'Content-Type: application/json' -d "$chat}" > "$work/chat.code" &
curl_pid=$!
for _ in $(seq 1 600); do [[ $(health_field slots_busy) == 1 ]] && break; sleep 0.05; done
[[ $(health_field slots_busy) == 1 ]] || fail "the request never started"
kill -STOP "$pid3"
kill -SEGV "$pid3"
kill -CONT "$pid3"
wait "$curl_pid" || true
code=$(cat "$work/chat.code")
[[ $code == 500 ]] || fail "a request to a crashed engine got $code: $(cat "$work/chat.json")"
python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['error']['code']=='engine_failed', b" "$work/chat.json" ||
    fail "not an OpenAI error: $(cat "$work/chat.json")"
pid4=$(wait_engine_ready 3)
check_replaced "$pid3" "$pid4"
grep -q "killed by signal 11 (SIGSEGV)" "$work/server.log" || fail "no log line names the crash"
echo "crashed engine: OpenAI 500, engine $pid3 -> $pid4"

# The same port serves again, and /metrics counts the restarts.
code=$(curl -s -o "$work/after.json" -w '%{http_code}' "$base/v1/chat/completions" -H 'Content-Type: application/json' \
    -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}')
[[ $code == 200 ]] || fail "after the restarts a request got $code: $(cat "$work/after.json")"
curl -s "$base/metrics" | grep -q '^strata_engine_restarts_total 3$' || fail "/metrics: $(curl -s "$base/metrics" | grep restarts)"

# SIGTERM: the supervisor stops its engine and exits 0, leaving no process behind.
kill -TERM "$server_pid"
wait "$server_pid" || fail "the supervisor exited $? on SIGTERM"
server_pid=""
[[ ! -e /proc/$pid4 ]] || fail "the engine $pid4 outlived the supervisor"
echo "PASS"
