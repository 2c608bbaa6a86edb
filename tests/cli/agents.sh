#!/usr/bin/env bash
# Real coding agents against `strata serve` on the built-in model: Codex CLI, Claude Code and
# opencode, headless, each a one-turn task and a forced tool call (tests/agents/agents.test.cjs).
# The agents are pinned in tests/agents/package-lock.json and installed into the build tree (their
# npm cache there too, so a second run needs no network). Skips when node or npm is missing.
# Usage: agents.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
for tool in node npm; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 0; }
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
(( node_major >= 20 )) || { echo "SKIP: Node.js $(node --version) is too old: the test runner needs 20 or newer"; exit 0; }

build=$(cd "$(dirname "$strata")/.." && pwd)
work=$build/agents
mkdir -p "$work"
# `npm install`, not `npm ci`: opencode-ai lists its other platforms' packages with no version,
# which `npm ci` takes for a lock file out of sync. The versions are pinned exactly either way, and
# the lock's integrity hashes are checked. installed.lock records what the tree holds.
if ! cmp -s "$root/tests/agents/package-lock.json" "$work/installed.lock" || [[ ! -d $work/node_modules ]]; then
    cp "$root/tests/agents/package.json" "$root/tests/agents/package-lock.json" "$work/"
    (cd "$work" && npm install --prefer-offline --no-audit --no-fund --cache "$work/npm-cache" --loglevel=error)
    cp "$root/tests/agents/package-lock.json" "$work/installed.lock"
fi

cd "$root/tests/agents"
STRATA_BIN=$strata AGENTS_BIN=$work/node_modules/.bin timeout 1500 node --test --test-concurrency=1 agents.test.cjs
