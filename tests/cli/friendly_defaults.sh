#!/usr/bin/env bash
# End-to-end: the defaults a newcomer meets. `strata run` without -m uses the built-in model and
# says so; `--file` options read a pipe or FIFO (their size on disk is 0, they must be read to the
# end) the same as a file.
# Usage: friendly_defaults.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model (see tools/builtin_model/README.md)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run without -m: the built-in model, named on stderr, gives what -m with it gives.
(cd "$work" && "$strata" run -p "And God said" -n 12 --temp 0 > "$work/default.txt" 2> "$work/err.txt") ||
  fail "strata run without -m: $(cat "$work/err.txt")"
grep -q "using the built-in model .*strata-kjv-moe.gguf" "$work/err.txt" || fail "run without -m does not name the model: $(cat "$work/err.txt")"
"$strata" run -m "$model" -p "And God said" -n 12 --temp 0 > "$work/explicit.txt" 2> /dev/null
cmp -s "$work/default.txt" "$work/explicit.txt" || fail "run without -m differs from -m the built-in model"

# tokenize --file - (standard input), --file /dev/stdin with a pipe, and a FIFO give the ids of --text.
text="In the beginning God created the heaven and the earth."
want=$("$strata" tokenize -m "$model" --text "$text" --ids)
[[ -n $want ]] || fail "tokenize --text gave no ids"
got=$(printf '%s' "$text" | "$strata" tokenize -m "$model" --file - --ids)
[[ $got == "$want" ]] || fail "tokenize --file - from a pipe: expected '$want', got '$got'"
# /dev/stdin and FIFOs are POSIX's (the Windows build's tests set STRATA_TEST_PLATFORM=windows).
if [[ ${STRATA_TEST_PLATFORM:-} != windows ]]; then
    got=$(printf '%s' "$text" | "$strata" tokenize -m "$model" --file /dev/stdin --ids)
    [[ $got == "$want" ]] || fail "tokenize --file /dev/stdin from a pipe: expected '$want', got '$got'"
    mkfifo "$work/fifo"
    printf '%s' "$text" > "$work/fifo" &
    got=$("$strata" tokenize -m "$model" --file "$work/fifo" --ids)
    wait
    [[ $got == "$want" ]] || fail "tokenize --file FIFO: expected '$want', got '$got'"
fi
# run -f reads its prompt from a pipe too.
printf 'And God said' | "$strata" run -m "$model" -f - -n 12 --temp 0 > "$work/piped.txt" 2> /dev/null
cmp -s "$work/piped.txt" "$work/explicit.txt" || fail "run -f - differs from -p"
echo "PASS"
