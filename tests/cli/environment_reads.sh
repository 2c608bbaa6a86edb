#!/usr/bin/env bash
# Only the command line's edge reads the environment (scripts/check_environment_reads.py): the
# source tree passes, and a copy with a getenv in a kernel fails and names the line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$here/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$root/scripts/check_environment_reads.py" > "$work/out" \
  || { cat "$work/out"; echo "environment_reads: src/ reads the environment outside cli/environment.cpp"; exit 1; }

mkdir -p "$work/src/backend/cpu" "$work/src/cli"
printf '// getenv in a comment is fine\nint tiles() { return std::getenv("X") != nullptr; }\n' > "$work/src/backend/cpu/op.cpp"
printf 'const char* v = std::getenv("STRATA_X");\n' > "$work/src/cli/environment.cpp"
if python3 "$root/scripts/check_environment_reads.py" "$work/src" > "$work/bad"; then
  cat "$work/bad"; echo "environment_reads: a getenv in backend/ was not caught"; exit 1
fi
grep -q '^backend/cpu/op.cpp:2: reads the environment' "$work/bad" \
  || { cat "$work/bad"; echo "environment_reads: the read is not named by file and line"; exit 1; }
[[ $(grep -c 'reads the environment' "$work/bad") == 1 ]] \
  || { cat "$work/bad"; echo "environment_reads: the comment or the edge module was reported"; exit 1; }
echo "environment_reads: ok"
