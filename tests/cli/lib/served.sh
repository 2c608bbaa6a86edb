# Sourced by the CLI scripts that run `strata serve` in the background (not a test itself: ctest
# runs tests/cli/*.sh only). It gives them:
#   $work           a folder removed at exit, where the server's log goes ($work/server.log);
#   server_pid      set it to the server's pid: at exit the server is killed if still running;
#   fail MESSAGE    prints MESSAGE and the server's log, and exits 1;
#   wait_for_port   waits (up to 60 s on a loaded machine) for the port the server announces
#                   (`--port 0` lets the system choose it), and sets $port and $base;
#   wait_engine_ready N   (supervised serve) waits until /health says ready with N engine
#                   restarts, and prints the engine's pid.
work="$(mktemp -d)"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]]; then kill -9 "$server_pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [[ -f "$work/server.log" ]] && sed 's/^/  server: /' "$work/server.log" >&2; exit 1; }
wait_for_port() {
    port=""
    for _ in $(seq 1 600); do
        port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/server.log" | head -1)
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    [[ -n "$port" ]] || fail "no 'listening on' line"
    base="http://127.0.0.1:$port"
}
wait_engine_ready() {
    for _ in $(seq 1 1200); do
        local h
        h=$(curl -s "$base/health" || true)
        if python3 -c "import json,sys; h=json.loads(sys.argv[1]); sys.exit(0 if h.get('status')=='ready' and h.get('engine_restarts')==$1 else 1)" "$h" 2> /dev/null; then
            python3 -c "import json,sys; print(json.loads(sys.argv[1])['engine_pid'])" "$h"
            return
        fi
        sleep 0.1
    done
    fail "the engine never became ready with $1 restarts: $(curl -s "$base/health")"
}
