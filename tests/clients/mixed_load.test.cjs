// The server under a mixed load: 16 concurrent clients × 200 requests each, over every endpoint
// (chat, completions, responses and messages, streamed and not, token counting, models, health,
// metrics, a JSON-schema reply) and bad requests (broken JSON, missing and mistyped fields, unknown
// routes and ids, more tokens than the context holds, a forced tool call without tools). Every
// request must be answered — none lost, no 5xx — a good one with a whole answer (a stream ending
// as its API says), a bad one with a 4xx carrying a reason in its API's shape; and the engine
// process's resident memory after the load must be back to its level after a warm-up round of the
// same mix (no growth per request). Uses Node's fetch only; tests/cli/mixed_load.sh runs it.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const { startServer } = require("./server.cjs");

const CLIENTS = 16, REQUESTS_PER_CLIENT = 200;
// Resident memory may differ from the warm level by allocator noise, not by anything per request:
// 3,200 requests leaking even 4 KiB each would add 12.5 MiB.
const RSS_SLACK_BYTES = 8 << 20;

const user = (n) => [{ role: "user", content: `Who begat Enos? (${n})` }];
const json = (path, body, extra = {}) => ({ method: "POST", path, body: JSON.stringify(body), ...extra });

// Each kind: the request, whether it must succeed, and for a stream how it must end.
const KINDS = [
  { name: "chat", ok: true, make: (n) => json("/v1/chat/completions", { messages: user(n), max_tokens: 8 }) },
  { name: "chat stream", ok: true, stream: "chat", make: (n) => json("/v1/chat/completions", { messages: user(n), max_tokens: 8, stream: true }) },
  { name: "completion", ok: true, make: (n) => json("/v1/completions", { prompt: `In the beginning ${n}`, max_tokens: 8 }) },
  { name: "responses", ok: true, make: (n) => json("/v1/responses", { model: "m", input: `Hi ${n}`, max_output_tokens: 8, store: false }) },
  { name: "responses stream", ok: true, stream: "responses", make: (n) => json("/v1/responses", { model: "m", input: `Hi ${n}`, max_output_tokens: 8, stream: true }) },
  { name: "messages", ok: true, make: (n) => json("/v1/messages", { model: "m", max_tokens: 8, messages: user(n) }) },
  { name: "messages stream", ok: true, stream: "anthropic", make: (n) => json("/v1/messages", { model: "m", max_tokens: 8, messages: user(n), stream: true }) },
  { name: "count_tokens", ok: true, make: (n) => json("/v1/messages/count_tokens", { model: "m", messages: user(n) }) },
  { name: "input_tokens", ok: true, make: (n) => json("/v1/responses/input_tokens", { model: "m", input: `Hi ${n}` }) },
  { name: "json schema", ok: true, make: (n) => json("/v1/chat/completions", { messages: user(n), max_tokens: 24,
      response_format: { type: "json_schema", json_schema: { name: "v", strict: true, schema: { type: "object",
        properties: { book: { type: "string", maxLength: 6 } }, required: ["book"] } } } }) },
  { name: "models", ok: true, make: () => ({ method: "GET", path: "/v1/models" }) },
  { name: "health", ok: true, make: () => ({ method: "GET", path: "/health" }) },
  { name: "metrics", ok: true, text: true, make: () => ({ method: "GET", path: "/metrics" }) },
  { name: "broken json", ok: false, make: () => ({ method: "POST", path: "/v1/chat/completions", body: '{"messages": [' }) },
  { name: "no messages", ok: false, make: () => json("/v1/chat/completions", { max_tokens: 4 }) },
  { name: "mistyped max_tokens", ok: false, make: (n) => json("/v1/chat/completions", { messages: user(n), max_tokens: "many" }) },
  { name: "messages without max_tokens", ok: false, make: (n) => json("/v1/messages", { model: "m", messages: user(n) }) },
  { name: "messages bad role", ok: false, make: () => json("/v1/messages", { model: "m", max_tokens: 4, messages: [{ role: "wizard", content: "x" }] }) },
  { name: "unknown route", ok: false, make: () => json("/v1/nowhere", {}) },
  { name: "unknown response id", ok: false, make: () => ({ method: "GET", path: "/v1/responses/resp_0000" }) },
  { name: "beyond the context", ok: false, make: (n) => json("/v1/chat/completions", { messages: user(n), max_tokens: 100000 }) },
  { name: "forced call without tools", ok: false, make: () => json("/v1/responses", { model: "m", input: "x", tool_choice: "required" }) },
];

function endsWell(kind, text) {
  if (kind === "chat") return text.trimEnd().endsWith("data: [DONE]");
  if (kind === "responses") return /event: response\.completed\n/.test(text) || /event: response\.incomplete\n/.test(text);
  return /event: message_stop\n/.test(text);
}

// One request; a description of what was wrong with its answer, or null.
async function send(baseURL, kind, n) {
  const r = kind.make(n);
  let res, text;
  try {
    res = await fetch(baseURL + r.path, { method: r.method, body: r.body, headers: r.body ? { "Content-Type": "application/json" } : {} });
    text = await res.text();
  } catch (e) {
    return `${kind.name}: lost (${e.message})`;
  }
  if (kind.ok) {
    if (res.status !== 200) return `${kind.name}: ${res.status} ${text.slice(0, 200)}`;
    if (kind.stream) return endsWell(kind.stream, text) ? null : `${kind.name}: the stream did not end well: ${text.slice(-200)}`;
    if (kind.text) return text.length > 0 ? null : `${kind.name}: empty`;
    try { JSON.parse(text); } catch { return `${kind.name}: not JSON: ${text.slice(0, 200)}`; }
    return null;
  }
  if (res.status < 400 || res.status >= 500) return `${kind.name}: answered ${res.status}, not 4xx: ${text.slice(0, 200)}`;
  let body;
  try { body = JSON.parse(text); } catch { return `${kind.name}: a ${res.status} without a JSON reason: ${text.slice(0, 200)}`; }
  const anthropic = r.path.startsWith("/v1/messages");
  const reason = anthropic ? body.type === "error" && body.error?.message : body.error?.message;
  return typeof reason === "string" && reason.length > 0 ? null : `${kind.name}: ${res.status} without a reason: ${text.slice(0, 200)}`;
}

async function round(baseURL, clients, perClient) {
  const failures = [];
  let answered = 0;
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; i < perClient; i++) {
      const kind = KINDS[(c * 7 + i) % KINDS.length];
      const why = await send(baseURL, kind, c * perClient + i);
      if (why) failures.push(why); else answered++;
    }
  }));
  return { failures, answered };
}

function residentBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m[1]) * 1024;
}

async function idleEnginePid(baseURL) {
  for (;;) {
    const h = await (await fetch(baseURL + "/health")).json();
    if (h.status === "ready" && h.slots_busy === 0 && h.queued === 0) return h.engine_pid;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test(`${CLIENTS} clients × ${REQUESTS_PER_CLIENT} mixed requests: none lost, bad ones 4xx with a reason, memory flat`, { timeout: 900000 }, async () => {
  const server = await startServer({ ctxSize: 1024, slots: 4 });
  try {
    // Warm-up: the same mix once per client, so that every buffer, arena and cache is at its size.
    const warm = await round(server.baseURL, CLIENTS, KINDS.length);
    assert.deepEqual(warm.failures, [], warm.failures.slice(0, 10).join("\n"));
    const pid = await idleEnginePid(server.baseURL);
    const before = residentBytes(pid);
    const t0 = Date.now();
    const load = await round(server.baseURL, CLIENTS, REQUESTS_PER_CLIENT);
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(await idleEnginePid(server.baseURL), pid, "the engine was restarted during the load");
    const after = residentBytes(pid);
    console.log(`${load.answered} of ${CLIENTS * REQUESTS_PER_CLIENT} answered as expected in ${seconds.toFixed(1)} s; ` +
      `engine resident memory ${(before / 2 ** 20).toFixed(1)} MiB before, ${(after / 2 ** 20).toFixed(1)} MiB after`);
    assert.deepEqual(load.failures, [], `${load.failures.length} failures:\n${load.failures.slice(0, 20).join("\n")}`);
    assert.equal(load.answered, CLIENTS * REQUESTS_PER_CLIENT);
    assert.ok(after <= before + RSS_SLACK_BYTES, `resident memory grew from ${before} to ${after} bytes`);
  } finally {
    await server.stop();
  }
});
