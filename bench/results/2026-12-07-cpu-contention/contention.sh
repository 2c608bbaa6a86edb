#!/usr/bin/env bash
# Decode speed with 0 and BUSY cores kept busy by burner.sh, for one or more builds, alternated
# ROUNDS times in one run so that every build sees the same machine. Each round: for each build,
# `strata bench` tg with THREADS threads on the idle machine, then the same beside the burner
# (started before the bench, stopped by its pid after).
#   contention.sh BINS MODEL OUT_DIR [THREADS (2)] [BUSY (1)] [ROUNDS (3)] [extra bench flags...]
# BINS: name=path[@threads][,...] (@threads overrides THREADS for that entry; "auto" where the
# build takes it).
set -u
bins=${1:?name=strata[,name=strata...]} model=${2:?model} out=${3:?output dir}
threads=${4:-2} busy=${5:-1} rounds=${6:-3}
shift $(( $# < 6 ? $# : 6 ))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
bench() {  # label path[@threads]: one bench, tg only, its table row printed
  local bin=${2%@*} t=$threads
  [[ $2 == *@* ]] && t=${2##*@}
  "$bin" bench -m "$model" -p 0 -n "${NGEN:-64}" -r 3 --no-bound -t "$t" "${extra[@]}" > "$out/$1.txt" 2>&1
  echo "$1: $(grep -E "^\|.*tg" "$out/$1.txt" | tail -1) load $(cut -d' ' -f1 /proc/loadavg)"
}
extra=("$@")
IFS=, read -r -a builds <<< "$bins"
for ((r = 1; r <= rounds; r++)); do
  for b in "${builds[@]}"; do bench "${b%%=*}_idle_r$r" "${b#*=}"; done
  "$here/burner.sh" "$busy" 600 & burner=$!
  sleep 1
  for b in "${builds[@]}"; do bench "${b%%=*}_busy${busy}_r$r" "${b#*=}"; done
  kill "$burner"; wait "$burner" 2>/dev/null
done
