#!/usr/bin/env bash
# Keeps N cores busy for SECONDS seconds with plain busy loops (no memory traffic, no I/O), the
# stand-in for a compiler or a browser tab that the contention measurements run beside.
#   burner.sh N SECONDS    # returns when the loops end; SIGTERM to it stops them early
set -u
n=${1:?cores to keep busy}
seconds=${2:?seconds}
pids=()
for ((i = 0; i < n; i++)); do
  timeout "$seconds" bash -c 'while :; do :; done' &
  pids+=($!)
done
# Each loop runs under `timeout`, in a process group of its own: stop them by their ids.
trap 'kill "${pids[@]}" 2>/dev/null; exit 0' TERM INT
wait "${pids[@]}"
