#!/usr/bin/env bash
# End-to-end with real clients: the official `openai` (chat, completions, responses) and `@anthropic-ai/sdk` npm packages and the
# chat page in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) against `strata serve`.
# The npm packages are pinned in tests/clients/package-lock.json and installed into the build tree
# (node_modules and npm's cache there, so a second run needs no network). Skips when node, npm or
# chromium is missing. The screenshot is left in <build>/clients/artifacts/web-page.png.
# Usage: clients.sh <path-to-strata> <testdata-root>
set -euo pipefail
strata=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
for tool in node npm; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 0; }
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
(( node_major >= 20 )) || { echo "SKIP: Node.js $(node --version) is too old: playwright-core needs 20 or newer"; exit 0; }
chromium=${CHROMIUM:-/usr/bin/chromium}
[[ -x $chromium ]] || { echo "SKIP: no Chromium at $chromium (Debian package chromium; or set CHROMIUM)"; exit 0; }

# The build tree is the strata binary's; the packages live beside it, outside the source tree.
build=$(cd "$(dirname "$strata")/.." && pwd)
work=$build/clients
mkdir -p "$work"
if ! cmp -s "$root/tests/clients/package-lock.json" "$work/package-lock.json" || [[ ! -d $work/node_modules ]]; then
    cp "$root/tests/clients/package.json" "$root/tests/clients/package-lock.json" "$work/"
    # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core has no install hook today; this keeps it so.
    (cd "$work" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefer-offline --no-audit --no-fund \
        --cache "$work/npm-cache" --loglevel=error)
fi

# The tests are CommonJS so NODE_PATH can point them at node_modules in the build tree. One file
# at a time: each starts its own server, and CI has two cores.
cd "$root/tests/clients"
STRATA_BIN=$strata CHROMIUM=$chromium CLIENTS_ARTIFACTS=$work/artifacts NODE_PATH=$work/node_modules \
    timeout 300 node --test --test-concurrency=1 openai_client.test.cjs responses_client.test.cjs anthropic_client.test.cjs web_page.test.cjs
