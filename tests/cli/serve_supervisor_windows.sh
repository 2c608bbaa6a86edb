#!/usr/bin/env bash
# The engine survives on Windows (server/engine_process.h; Wine in CI): `strata serve` on the
# built-in model runs its engine in a child process; the child killed mid-stream (taskkill /F,
# TerminateProcess) ends the stream with an error event, a new engine (another pid) serves on the
# same port, /health counts the restart; Ctrl+C stops the supervisor, which asks the engine
# through its stop pipe to drain and exit (both say "stopped"), and exits 0. The Linux test
# (serve_supervisor.sh) covers the hang and the crash signals, which are the same code above the
# process layer. Elsewhere: skipped.
# Usage: serve_supervisor_windows.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata=$1
if [[ "${STRATA_TEST_PLATFORM:-}" != "windows" ]]; then
  echo "SKIP: the Windows engine process (serve_supervisor.sh is the POSIX one)"
  exit 0
fi
for tool in curl python3; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 0; }
done
wine=$(sed -n 's|^exec "\([^"]*\)".*|\1|p' "$strata")  # the launcher's emulator (tests/CMakeLists.txt)
[[ -x $wine ]] || { echo "FAIL: no emulator in the launcher $strata" >&2; exit 1; }
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/lib/served.sh"

"$strata" serve -m "$root/models/strata-kjv-moe.gguf" --port 0 --ctx-size 2048 -t 2 2> "$work/server.log" &
server_pid=$!
wait_for_port
grep -q "the engine starts in a supervised process" "$work/server.log" || fail "serve did not start a supervised engine"
pid1=$(wait_engine_ready 0)
chat='{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2000,"ignore_eos":true,"stream":true}'
curl -sN "$base/v1/chat/completions" -H 'Content-Type: application/json' -d "$chat" > "$work/stream.txt" &
curl_pid=$!
for _ in $(seq 1 600); do grep -q '"delta"' "$work/stream.txt" 2> /dev/null && break; sleep 0.05; done
grep -q '"delta"' "$work/stream.txt" || fail "the stream never started"
WINEDEBUG=-all "$wine" taskkill /F /PID "$pid1" > "$work/taskkill.txt" 2>&1 || fail "taskkill: $(cat "$work/taskkill.txt")"
wait "$curl_pid" || fail "curl failed on the broken stream"
tail -n 3 "$work/stream.txt" | grep -q '"code":"engine_failed"' || fail "the stream did not end with an error event: $(tail -c 400 "$work/stream.txt")"
! grep -q '\[DONE\]' "$work/stream.txt" || fail "a broken stream said [DONE]"
pid2=$(wait_engine_ready 1)
[[ $pid1 != "$pid2" ]] || fail "the engine pid did not change ($pid1)"
grep -q "strata serve: the engine stopped (" "$work/server.log" || fail "no log line says the engine stopped"
echo "killed mid-stream: error event, engine $pid1 -> $pid2"
code=$(curl -s -o "$work/after.json" -w '%{http_code}' "$base/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}')
[[ $code == 200 ]] || fail "after the restart a request got $code: $(cat "$work/after.json")"
# Ctrl+C (Wine turns SIGINT into it): the engine drains through its stop pipe, then the supervisor exits 0.
kill -INT "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[[ $status == 0 ]] || fail "the supervisor exited $status on Ctrl+C"
grep -q "stopping: finishing the requests in progress" "$work/server.log" || fail "the engine was not asked to drain"
[[ $(grep -c "^strata serve: stopped" "$work/server.log") == 2 ]] || fail "the engine and the supervisor did not both stop"
echo "PASS"
