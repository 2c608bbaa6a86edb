// Real coding agents, headless, against `strata serve` on the built-in model, through the
// recording proxy (recording_proxy.cjs): Codex CLI (`codex exec`, OpenAI Responses), Claude Code
// (`claude -p`, Anthropic Messages) and opencode (`opencode run`, OpenAI chat completions). Each
// completes a one-turn task (the answer's quality does not matter: the built-in model writes
// scripture): exit code 0, every model request answered 200 with a stream that ends as its API
// says, or 4xx with an error in the API's shape (Claude Code asks for more tokens than the context
// holds first and retries on the refusal), no 5xx. Then the same task with the first request's
// tool_choice forced to a named tool (by the proxy, as a client sending tool_choice would): the
// answer must hold that call, and the agent's next request must carry the call's result, which
// shows the agent took it as a tool call and ran it. The agents come from tests/agents/
// package-lock.json (tests/cli/agents.sh installs them); AGENTS_BIN names their bin directory.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { spawn, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { startServer } = require("../clients/server.cjs");
const { startProxy } = require("./recording_proxy.cjs");

const bin = process.env.AGENTS_BIN;
const TASK = "List the files in this directory and say what notes.txt holds.";
const AGENT_TIMEOUT_MS = 300000;

function agentPath(name) {
  if (!bin) throw new Error("AGENTS_BIN is not set: tests/cli/agents.sh sets it");
  return path.join(bin, name);
}

// The server's context: Claude Code wants about 4K tokens of room after its prompt.
async function withServer(fn) {
  const server = await startServer({ ctxSize: 8192 });
  try { return await fn(server); } finally { await server.stop(); }
}

function tempDirs(name) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `strata-agent-${name}-`));
  const home = path.join(root, "home"), work = path.join(root, "work");
  fs.mkdirSync(home); fs.mkdirSync(work);
  fs.writeFileSync(path.join(work, "notes.txt"), "Buy bread.\n");
  return { root, home, work };
}

function run(command, args, { cwd, env }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (c) => { stdout += c; });
    child.stderr.on("data", (c) => { stderr += c; });
    const timer = setTimeout(() => child.kill("SIGKILL"), AGENT_TIMEOUT_MS);
    child.on("exit", (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
  });
}

// The JSON events of a server-sent-events answer (or the one JSON body of a non-streamed one).
function events(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]") { out.push("[DONE]"); continue; }
    try { out.push(JSON.parse(data)); } catch { out.push({ unparsable: data }); }
  }
  if (out.length === 0) { try { out.push(JSON.parse(text)); } catch { /* not JSON */ } }
  return out;
}

// Whether a 200 answer ended as its API ends one (the agent parsed it too, or it would not exit 0).
function endsWell(dialect, request, text) {
  const evs = events(text);
  if (evs.some((e) => e.unparsable !== undefined)) return false;
  if (!request?.stream) return evs.length === 1;
  if (dialect === "anthropic") return evs.some((e) => e.type === "message_stop");
  if (dialect === "responses") return evs.some((e) => e.type === "response.completed" || e.type === "response.incomplete");
  return evs[evs.length - 1] === "[DONE]";
}

// A 4xx body in the API's error shape, with a message.
function wellFormedError(dialect, text) {
  let body;
  try { body = JSON.parse(text); } catch { return false; }
  if (dialect === "anthropic") return body.type === "error" && typeof body.error?.message === "string";
  return typeof body.error?.message === "string";
}

// The tool calls in an answer: [{ id, name }].
function toolCalls(dialect, text) {
  const calls = [];
  for (const e of events(text)) {
    if (dialect === "anthropic") {
      if (e.type === "content_block_start" && e.content_block?.type === "tool_use") calls.push({ id: e.content_block.id, name: e.content_block.name });
      for (const b of e.content ?? []) if (b.type === "tool_use") calls.push({ id: b.id, name: b.name });
    } else if (dialect === "responses") {
      const items = e.type === "response.output_item.done" ? [e.item] : e.output ?? e.response?.output ?? [];
      for (const it of items) if (it?.type === "function_call") calls.push({ id: it.call_id, name: it.name });
    } else {
      for (const c of e.choices ?? []) {
        for (const t of c.delta?.tool_calls ?? c.message?.tool_calls ?? []) if (t.id) calls.push({ id: t.id, name: t.function?.name });
      }
    }
  }
  const seen = new Set();
  return calls.filter((c) => !seen.has(c.id) && seen.add(c.id));
}

// Whether a request carries the result of call `id`.
function carriesResult(dialect, request, id) {
  if (!request) return false;
  if (dialect === "anthropic") {
    return (request.messages ?? []).some((m) => Array.isArray(m.content) &&
      m.content.some((b) => b.type === "tool_result" && b.tool_use_id === id));
  }
  if (dialect === "responses") {
    return Array.isArray(request.input) && request.input.some((it) => it.type === "function_call_output" && it.call_id === id);
  }
  return (request.messages ?? []).some((m) => m.role === "tool" && m.tool_call_id === id);
}

function describe(exchanges) {
  return exchanges.map((x, i) => `#${i} ${x.method} ${x.path} -> ${x.status}${x.forcedTool ? ` (forced ${x.forcedTool})` : ""}: ${x.response.slice(0, 200)}`).join("\n");
}

function checkExchanges(proxy, dialect, result) {
  const model = proxy.exchanges.filter((x) => x.dialect === dialect);
  const log = `${describe(proxy.exchanges)}\n--- stdout\n${result.stdout.slice(-3000)}\n--- stderr\n${result.stderr.slice(-3000)}`;
  assert.equal(result.code, 0, `the agent exited ${result.code} (${result.signal ?? "no signal"})\n${log}`);
  assert.ok(model.some((x) => x.status === 200), `no ${dialect} request was answered 200\n${log}`);
  for (const x of model) {
    if (x.status === 200) assert.ok(endsWell(dialect, x.request, x.response), `a 200 answer does not end as the API says\n${log}`);
    else assert.ok(x.status >= 400 && x.status < 500 && wellFormedError(dialect, x.response), `answer ${x.status} is no well-formed 4xx\n${log}`);
  }
  return log;
}

function checkForcedCall(proxy, dialect, log) {
  const forced = proxy.forced();
  assert.ok(forced, `no forced request was answered 200 (or none offered tools)\n${log}`);
  const at = proxy.exchanges.findIndex((x) => x.forcedTool && x.status === 200);
  const answer = proxy.exchanges[at];
  const calls = toolCalls(dialect, answer.response).filter((c) => c.name === forced.name);
  assert.ok(calls.length > 0, `the forced answer holds no call to ${forced.name}\n${log}`);
  const answered = proxy.exchanges.slice(at + 1).some((x) => calls.some((c) => carriesResult(dialect, x.request, c.id)));
  assert.ok(answered, `the agent never sent back the result of its ${forced.name} call\n${log}`);
  console.log(`forced ${forced.name}: call ${calls[0].id} reached the agent and its result came back`);
}

const AGENTS = {
  codex: {
    dialect: "responses",
    version: () => execFileSync(agentPath("codex"), ["--version"]).toString().trim(),
    async run(proxy, dirs) {
      fs.writeFileSync(path.join(dirs.home, "config.toml"), [
        'model = "strata-kjv-moe"', 'model_provider = "strata"', "",
        "[model_providers.strata]", 'name = "Strata"', `base_url = "${proxy.baseURL}/v1"`,
        'wire_api = "responses"', 'env_key = "STRATA_API_KEY"', ""].join("\n"));
      const env = { ...process.env, CODEX_HOME: dirs.home, HOME: dirs.home, STRATA_API_KEY: "local" };
      return run(agentPath("codex"), ["exec", "--skip-git-repo-check", "--json", TASK], { cwd: dirs.work, env });
    },
  },
  claude: {
    dialect: "anthropic",
    version: () => execFileSync(agentPath("claude"), ["--version"], { env: { ...process.env, DISABLE_AUTOUPDATER: "1" } }).toString().trim(),
    async run(proxy, dirs) {
      const env = { ...process.env, HOME: dirs.home, ANTHROPIC_BASE_URL: proxy.baseURL, ANTHROPIC_API_KEY: "local",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
      return run(agentPath("claude"), ["-p", "--output-format", "stream-json", "--verbose", TASK], { cwd: dirs.work, env });
    },
  },
  opencode: {
    dialect: "chat",
    version: () => execFileSync(agentPath("opencode"), ["--version"]).toString().trim(),
    async run(proxy, dirs) {
      // A custom OpenAI-compatible provider, as opencode's docs configure a local server; the
      // limits say how long the context is (else it asks for 32,000 tokens of output).
      fs.writeFileSync(path.join(dirs.work, "opencode.json"), JSON.stringify({
        provider: { strata: { npm: "@ai-sdk/openai-compatible", name: "Strata", options: { baseURL: `${proxy.baseURL}/v1` },
          models: { "strata-kjv-moe": { name: "strata-kjv-moe", limit: { context: 8192, output: 1024 } } } } },
        model: "strata/strata-kjv-moe",
      }));
      // PWD too: opencode takes its session's directory from it, not from the working directory.
      const env = { ...process.env, HOME: dirs.home, PWD: dirs.work, XDG_CONFIG_HOME: path.join(dirs.home, ".config"),
        XDG_DATA_HOME: path.join(dirs.home, ".local/share"), XDG_CACHE_HOME: path.join(dirs.home, ".cache"),
        XDG_STATE_HOME: path.join(dirs.home, ".local/state") };
      return run(agentPath("opencode"), ["run", "--format", "json", TASK], { cwd: dirs.work, env });
    },
  },
};

for (const [name, agent] of Object.entries(AGENTS)) {
  for (const force of [false, true]) {
    test(`${name} ${force ? "takes a forced tool call" : "completes a one-turn task"}`, { timeout: AGENT_TIMEOUT_MS + 60000 }, async () => {
      if (!force) console.log(`${name} version: ${agent.version()}`);
      await withServer(async (server) => {
        const proxy = await startProxy({ target: server.baseURL, force });
        const dirs = tempDirs(name);
        try {
          const result = await agent.run(proxy, dirs);
          const log = checkExchanges(proxy, agent.dialect, result);
          if (force) checkForcedCall(proxy, agent.dialect, log);
          const codes = proxy.exchanges.filter((x) => x.dialect === agent.dialect).map((x) => x.status);
          console.log(`${name}: ${codes.length} model requests answered ${codes.join(" ")}`);
        } finally {
          await proxy.stop();
          fs.rmSync(dirs.root, { recursive: true, force: true });
        }
      });
    });
  }
}
