// A recording proxy between a coding agent and `strata serve`, for tests/agents: every request
// and its answer is kept (method, path, status, request JSON, response text), so a test can check
// what the agent sent and what it got back without trusting the agent's own output. With
// `force`, model requests that offer tools get their tool_choice rewritten to call one of them by
// name (one that changes nothing where the agent has it), in the request's own API dialect, until
// one such request is answered 200: the test then checks that the forced call reached the agent,
// i.e. that the agent sent the call's result back.
//
// The forced tool's free strings get a maxLength in that request: the built-in model learnt from
// a text without a double quote, so under the call's grammar it would never close an unbounded
// string (the reply would end at the token limit, not as a call). The call it writes is still
// valid under the agent's own schema.
//   const proxy = await startProxy({ target: server.baseURL, force: true });
//   ... the agent talks to proxy.baseURL ...
//   proxy.exchanges  // [{ method, path, status, request, response }]
//   await proxy.stop();
"use strict";
const http = require("node:http");
const zlib = require("node:zlib");

// The model routes of the three dialects and how each names a forced call by name.
const ROUTES = {
  "/v1/messages": { dialect: "anthropic", choice: (name) => ({ type: "tool", name }) },
  "/v1/responses": { dialect: "responses", choice: (name) => ({ type: "function", name }) },
  "/v1/chat/completions": { dialect: "chat", choice: (name) => ({ type: "function", function: { name } }) },
};

// Tools whose call changes nothing on the machine, in the order a forced call prefers them:
// Claude Code's task and schedule lists, Codex CLI's goal, opencode's glob (no tool of opencode
// takes no argument).
const HARMLESS_TOOLS = ["TaskList", "CronList", "get_goal", "glob", "Glob"];
const FORCED_STRING_LENGTH = 24;

// A copy of a JSON schema with maxLength on every string that has no bound, enum or pattern.
function boundStrings(schema) {
  if (Array.isArray(schema)) return schema.map(boundStrings);
  if (!schema || typeof schema !== "object") return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) out[k] = typeof v === "object" ? boundStrings(v) : v;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("string") && out.maxLength === undefined && out.enum === undefined && out.const === undefined &&
      out.pattern === undefined && out.format === undefined) {
    out.maxLength = FORCED_STRING_LENGTH;
  }
  return out;
}

function withBoundStrings(tool) {
  if (tool.input_schema) return { ...tool, input_schema: boundStrings(tool.input_schema) };
  if (tool.function?.parameters) return { ...tool, function: { ...tool.function, parameters: boundStrings(tool.function.parameters) } };
  if (tool.parameters) return { ...tool, parameters: boundStrings(tool.parameters) };
  return tool;
}

function routeOf(url) {
  const path = url.split("?")[0];
  return ROUTES[path] ? { path, ...ROUTES[path] } : null;
}

function toolName(tool) {
  // Anthropic and Responses: tool.name; chat: tool.function.name.
  return tool.name ?? tool.function?.name ?? null;
}

function decodeBody(buffer, encoding) {
  if (!encoding || encoding === "identity") return buffer;
  if (encoding === "gzip") return zlib.gunzipSync(buffer);
  if (encoding === "br") return zlib.brotliDecompressSync(buffer);
  if (encoding === "deflate") return zlib.inflateSync(buffer);
  throw new Error(`request body in an encoding the proxy cannot read: ${encoding}`);
}

async function startProxy({ target, force = false }) {
  const upstream = new URL(target);
  const exchanges = [];
  let forced = null;  // { dialect, name } once a rewritten request was answered 200
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      let body = decodeBody(Buffer.concat(chunks), req.headers["content-encoding"]);
      const headers = { ...req.headers };
      delete headers["content-encoding"];
      delete headers["accept-encoding"];  // answers in plain text, so they can be recorded
      delete headers["host"];
      let request = null;
      try { request = body.length ? JSON.parse(body.toString()) : null; } catch { request = null; }
      const route = routeOf(req.url);
      const entry = { method: req.method, path: req.url.split("?")[0], dialect: route?.dialect ?? null, request,
        status: 0, response: "", forcedTool: null };
      if (force && !forced && route && request && Array.isArray(request.tools) && request.tools.length) {
        const names = request.tools.map(toolName).filter(Boolean);
        const name = HARMLESS_TOOLS.find((n) => names.includes(n)) ?? names[0];
        request.tool_choice = route.choice(name);
        request.tools = request.tools.map((t) => (toolName(t) === name ? withBoundStrings(t) : t));
        // Anthropic refuses a forced tool with extended thinking on: the forced turn goes without.
        if (route.dialect === "anthropic") delete request.thinking;
        body = Buffer.from(JSON.stringify(request));
        entry.forcedTool = name;
      }
      headers["content-length"] = String(body.length);
      exchanges.push(entry);
      const up = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
        (r) => {
          entry.status = r.statusCode;
          res.writeHead(r.statusCode, r.headers);
          const out = [];
          r.on("data", (c) => { out.push(c); res.write(c); });
          r.on("end", () => {
            entry.response = Buffer.concat(out).toString();
            // A refused forced request (Claude Code first asks for more tokens than fit) forces the next.
            if (entry.forcedTool && r.statusCode === 200 && !forced) forced = { dialect: route.dialect, name: entry.forcedTool };
            res.end();
          });
        });
      up.on("error", (e) => { entry.status = 502; entry.response = String(e); res.writeHead(502); res.end(); });
      up.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseURL: `http://127.0.0.1:${server.address().port}`,
    exchanges,
    forced: () => forced,
    stop: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

module.exports = { startProxy };
