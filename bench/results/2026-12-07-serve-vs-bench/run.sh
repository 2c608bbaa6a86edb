#!/usr/bin/env bash
# One client of `strata serve` against `strata bench` tg on the same model and flags, alternated
# ROUNDS times in one run: bench tg (its own process, the server idle), then one streaming request
# of N tokens through stream_client.py (the server already loaded). Wall-clock rates on a shared
# machine move with its other load, so each side's CPU time per decoded token is measured too:
# bench's as the difference between runs of N+32 and 32 tokens (a warm-up and 3 repetitions of
# each, so 4N tokens apart; /usr/bin/time), the server's from its /proc/PID/stat ticks around
# the request (the ~20 prompt tokens included).
#   run.sh BIN MODEL OUT_DIR [N (128)] [ROUNDS (3)] [flags for both, e.g. -t 2 --device cpu]
set -u
bin=${1:?strata} model=${2:?model} out=${3:?output dir}
n=${4:-128} rounds=${5:-3}
shift $(( $# < 5 ? $# : 5 ))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$bin" serve -m "$model" --port 0 --slots 1 "$@" > "$out/serve.txt" 2>&1 &
serve=$!
port=""
for _ in $(seq 1 600); do
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$out/serve.txt" | tail -1)
  [[ -n $port ]] && grep -q "ready in" "$out/serve.txt" && break
  sleep 0.1
done
"$here/stream_client.py" "$port" 16 > /dev/null  # warm-up
cpu_seconds() {  # /usr/bin/time's output file: user + system seconds
  awk '{print $1 + $2}' "$1"
}
ticks() { awk '{print $14 + $15}' "/proc/$serve/stat"; }
hz=$(getconf CLK_TCK)
for ((r = 1; r <= rounds; r++)); do
  /usr/bin/time -f "%U %S" -o "$out/bench_long_r$r.time" "$bin" bench -m "$model" -p 0 -n $((n + 32)) -r 3 --no-bound "$@" > "$out/bench_r$r.txt" 2>&1
  /usr/bin/time -f "%U %S" -o "$out/bench_short_r$r.time" "$bin" bench -m "$model" -p 0 -n 32 -r 3 --no-bound "$@" > "$out/bench_short_r$r.txt" 2>&1
  bench_ms=$(echo "$(cpu_seconds "$out/bench_long_r$r.time") $(cpu_seconds "$out/bench_short_r$r.time") $n" | awk '{printf "%.3f", ($1 - $2) * 1000 / (4 * $3)}')
  echo "bench_r$r: $(grep -E '^\|.*tg' "$out/bench_r$r.txt" | tr -s ' ') cpu ${bench_ms} ms/token"
  t0=$(ticks)
  line=$("$here/stream_client.py" "$port" "$n")
  t1=$(ticks)
  serve_ms=$(echo "$t0 $t1 $hz $n" | awk '{printf "%.3f", ($2 - $1) * 1000 / $3 / $4}')
  echo "serve_r$r: $line cpu ${serve_ms} ms/token" | tee "$out/serve_r$r.txt"
done
kill "$serve"; wait "$serve" 2> /dev/null
