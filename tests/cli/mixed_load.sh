#!/usr/bin/env bash
# `strata serve` (supervised, built-in model, 4 slots) under 16 concurrent clients × 200 requests
# mixing every endpoint with bad requests: none lost, bad ones 4xx with a reason, the engine's
# resident memory back to its warm level (tests/clients/mixed_load.test.cjs; Node's fetch only, no
# npm packages). Skips without Node.js 20 or /proc.
# Usage: mixed_load.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v node > /dev/null || { echo "SKIP: node is not installed (scripts/setup.sh installs it)"; exit 0; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
(( node_major >= 20 )) || { echo "SKIP: Node.js $(node --version) is too old: the test runner needs 20 or newer"; exit 0; }
[[ -r /proc/self/status ]] || { echo "SKIP: no /proc to read the engine's memory from"; exit 0; }
cd "$root/tests/clients"
STRATA_BIN=$strata timeout 900 node --test mixed_load.test.cjs
