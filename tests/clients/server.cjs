// Starts `strata serve` for the client tests and stops it. The binary comes from $STRATA_BIN
// (tests/cli/clients.sh sets it); the model is the built-in one, which carries a chat template.
//   const server = await startServer({ apiKey: "k" });
//   ... fetch(server.baseURL + "/v1/models") ...
//   await server.stop();
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const repoRoot = path.resolve(__dirname, "../..");

async function startServer({ apiKey, ctxSize = 512, slots = 1, extraArgs = [] } = {}) {
  const bin = process.env.STRATA_BIN;
  if (!bin) throw new Error("STRATA_BIN is not set: point it at the built strata executable");
  const model = path.join(repoRoot, "models/strata-kjv-moe.gguf");
  // --port 0: the system picks a free port, printed as "listening on http://127.0.0.1:PORT".
  const args = ["serve", "-m", model, "--host", "127.0.0.1", "--port", "0", "--slots", String(slots),
    "--ctx-size", String(ctxSize), "-t", "2", ...extraArgs];
  if (apiKey) args.push("--api-key", apiKey);
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no 'listening on' line in 20 s:\n" + log)), 20000);
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`strata serve exited ${code}:\n${log}`)); });
  });
  const baseURL = `http://127.0.0.1:${port}`;
  // /health answers without a key: loading first, then ready once the model is in memory.
  for (let i = 0; ; i++) {
    const r = await fetch(baseURL + "/health").catch(() => null);
    if (r && (await r.json()).status === "ready") break;
    if (i >= 200) throw new Error("/health never said ready:\n" + log);
    await new Promise((res) => setTimeout(res, 100));
  }
  return {
    baseURL,
    log: () => log,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on("exit", resolve);
      child.kill("SIGKILL");  // nothing to drain: every test has awaited its requests
    }),
  };
}

module.exports = { startServer };
