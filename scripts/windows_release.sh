#!/usr/bin/env bash
# The Windows release archive: strata-windows-x64.zip with strata.exe, the built-in model where
# strata.exe looks for it (models\ beside it), START-HERE.bat (runs the built-in model, then shows
# how to serve a GGUF) and the licence and README. Then checks the archive as a user would meet
# it: unpacked into an empty folder, START-HERE.bat run under Wine must print the model's text.
# Usage: scripts/windows_release.sh <windows build dir> [out.zip]   (after the build of `strata`)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: windows_release.sh <windows build dir> [out.zip]}
out=${2:-$build/strata-windows-x64.zip}
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
[[ -f $build/bin/strata.exe ]] || { echo "no $build/bin/strata.exe: build the target strata first" >&2; exit 1; }
stage=$(mktemp -d)
check=$(mktemp -d)
trap 'rm -rf "$stage" "$check"' EXIT
mkdir -p "$stage/strata/models"
cp "$build/bin/strata.exe" "$stage/strata/"
cp models/strata-kjv-moe.gguf "$stage/strata/models/"
cp packaging/windows/START-HERE.bat "$stage/strata/"
cp README.md "$stage/strata/README.md"
[[ -f LICENSE ]] && cp LICENSE "$stage/strata/LICENSE.txt"
rm -f "$out"
(cd "$stage" && cmake -E tar cf "$out" --format=zip strata)
echo "wrote $out ($(du -h "$out" | cut -f1))"

# As a user meets it: unpacked, START-HERE.bat double-clicked (here: cmd /c under Wine, with
# the final pause answered by the end of standard input).
(cd "$check" && cmake -E tar xf "$out")
wine=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
if [[ ! -x $wine ]]; then
  echo "no Wine: the archive was not run"
  exit 0
fi
bat="Z:${check//\//\\}\\strata\\START-HERE.bat"  # Wine's cmd finds a batch file by its Windows path
text=$(cd "$check/strata" && WINEDEBUG=-all "$wine" cmd /c "$bat" < /dev/null 2>&1 | tr -d '\r')
printf '%s\n' "$text" | head -n 12
grep -q "using the built-in model" <<<"$text" || { echo "START-HERE.bat did not run the built-in model" >&2; exit 1; }
grep -qwE "the|and|unto|of" <<<"$text" || { echo "START-HERE.bat printed no text" >&2; exit 1; }
grep -q "strata.exe serve -m" <<<"$text" || { echo "START-HERE.bat did not say how to serve a GGUF" >&2; exit 1; }
echo "START-HERE.bat under Wine: the built-in model ran from the unpacked archive"
