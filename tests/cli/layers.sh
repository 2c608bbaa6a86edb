#!/usr/bin/env bash
# The include graph keeps the layer order (scripts/check_layers.py): the source tree passes, and a
# copy with one include going up a layer (an op including the runtime) fails and names the line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$here/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$root/scripts/check_layers.py" > "$work/out" || { cat "$work/out"; echo "layers: src/ has includes against the layer order"; exit 1; }

mkdir -p "$work/src/backend/cpu" "$work/src/runtime" "$work/src/core"
printf '#include "core/check.h"\n#include "runtime/session.h"\n' > "$work/src/backend/cpu/op.cpp"
printf '#include "backend/cpu/op.h"\n' > "$work/src/runtime/session.cpp"
printf '#pragma once\n' > "$work/src/core/check.h"
if python3 "$root/scripts/check_layers.py" "$work/src" > "$work/bad"; then
  cat "$work/bad"; echo "layers: an include from backend/ into runtime/ was not caught"; exit 1
fi
grep -q 'backend/cpu/op.cpp:2: backend/ (layer 4) includes runtime/ (layer 8)' "$work/bad" \
  || { cat "$work/bad"; echo "layers: the violation is not named by file and line"; exit 1; }
[[ $(grep -c 'includes' "$work/bad") == 1 ]] || { cat "$work/bad"; echo "layers: downward includes reported"; exit 1; }
echo "layers: ok"
