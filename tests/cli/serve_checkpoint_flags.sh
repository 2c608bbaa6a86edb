#!/usr/bin/env bash
# End-to-end: `strata serve --checkpoint-ram` refuses values it cannot use (negative, beyond the
# range, not a number) before it loads anything or binds a port, naming the flag; 0 (off) and a
# budget are taken, and the server says it is ready.
# Usage: serve_checkpoint_flags.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata="$1"
source "$(dirname "$0")/lib/served.sh"

"$strata" synth --preset tiny --layers 2 -o "$work/tiny.gguf" 2> /dev/null

for bad in -1 16777217 lots 1.5 ""; do
    if timeout 60 "$strata" serve -m "$work/tiny.gguf" --port 0 --checkpoint-ram "$bad" > "$work/out.txt" 2>&1; then
        fail "--checkpoint-ram '$bad' was accepted"
    fi
    grep -q -- "--checkpoint-ram" "$work/out.txt" || fail "--checkpoint-ram '$bad': the error does not name the flag: $(cat "$work/out.txt")"
    if grep -q "listening on" "$work/out.txt"; then fail "--checkpoint-ram '$bad': the server bound a port first"; fi
done

for good in 0 64; do
    "$strata" serve -m "$work/tiny.gguf" --port 0 --checkpoint-ram "$good" -t 1 2> "$work/server.log" &
    server_pid=$!
    for _ in $(seq 1 600); do  # up to 60 s on a loaded machine
        grep -q "ready in" "$work/server.log" && break
        kill -0 "$server_pid" 2> /dev/null || break
        sleep 0.1
    done
    grep -q "ready in" "$work/server.log" || fail "--checkpoint-ram $good: no 'ready' line: $(cat "$work/server.log")"
    kill -"${STRATA_TEST_STOP_SIGNAL:-TERM}" "$server_pid"
    wait "$server_pid" || fail "--checkpoint-ram $good: the server did not stop cleanly"
    server_pid=""
done
echo "OK"
