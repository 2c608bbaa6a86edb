// The server driven by the official `@anthropic-ai/sdk` npm client: what the library sends and
// parses must work end to end: messages with and without streaming (the client's own event
// accumulation, finalMessage()), tool definitions and a tool_result turn, stop sequences, token
// counting, errors and x-api-key authentication. The built-in model writes no tool call of its
// own (forcing one needs constrained decoding); the tool_use block itself is covered by
// tests/server/messages_e2e_test.cpp, whose model output is forced.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const Anthropic = require("@anthropic-ai/sdk");
const { startServer } = require("./server.cjs");

const apiKey = "client-test-key";
let server, client;

test.before(async () => {
  server = await startServer({ apiKey });
  // apiKey: sent as x-api-key, as Anthropic's API takes it. maxRetries 0: a failure shows at once.
  client = new Anthropic({ apiKey, baseURL: server.baseURL, maxRetries: 0, timeout: 60000 });
});
test.after(() => server && server.stop());

// Any model name is accepted and echoed; temperature 0 is greedy, so the stream must give
// exactly the non-streamed reply.
const model = "claude-sonnet-4-5";
const request = {
  model,
  max_tokens: 24,
  temperature: 0,
  system: "Answer with a verse.",
  messages: [{ role: "user", content: "Who made the heaven and the earth?" }],
};

test("messages.create returns a whole message", async () => {
  const msg = await client.messages.create(request);
  assert.match(msg.id, /^msg_/);
  assert.equal(msg.type, "message");
  assert.equal(msg.role, "assistant");
  assert.equal(msg.model, model);
  assert.ok(["end_turn", "max_tokens"].includes(msg.stop_reason), msg.stop_reason);
  assert.equal(msg.stop_sequence, null);
  assert.ok(msg.content.length >= 1, JSON.stringify(msg.content));
  const text = msg.content.find((b) => b.type === "text");
  assert.ok(text && text.text.length > 0, JSON.stringify(msg.content));
  const u = msg.usage;
  assert.ok(u.input_tokens + u.cache_read_input_tokens > 10, JSON.stringify(u));
  assert.ok(u.output_tokens > 0 && u.output_tokens <= 24, JSON.stringify(u));
  if (msg.stop_reason === "max_tokens") assert.equal(u.output_tokens, 24);
});

test("messages.stream gives the same message, event by event", async () => {
  const plain = await client.messages.create(request);
  const stream = client.messages.stream(request);
  const seen = [];
  let text = "";
  stream.on("streamEvent", (event) => seen.push(event.type));
  stream.on("text", (delta) => { text += delta; });
  const final = await stream.finalMessage();
  assert.equal(seen[0], "message_start");
  assert.equal(seen.at(-1), "message_stop");
  assert.equal(seen.at(-2), "message_delta");
  assert.ok(seen.includes("content_block_start") && seen.includes("content_block_stop"), seen.join(" "));
  assert.ok(seen.filter((t) => t === "content_block_delta").length > 1, "not streamed: " + seen.join(" "));
  assert.match(final.id, /^msg_/);
  assert.equal(final.model, model);
  assert.deepEqual(final.content, plain.content);
  assert.equal(text, plain.content.filter((b) => b.type === "text").map((b) => b.text).join(""));
  assert.equal(final.stop_reason, plain.stop_reason);
  assert.equal(final.usage.output_tokens, plain.usage.output_tokens);
  // The same prompt twice: the second reads it from the KV cache, and says so.
  assert.equal(final.usage.input_tokens + final.usage.cache_read_input_tokens,
    plain.usage.input_tokens + plain.usage.cache_read_input_tokens);
  assert.ok(final.usage.cache_read_input_tokens > 0, JSON.stringify(final.usage));
});

test("a stop sequence ends the reply and is named", async () => {
  const plain = await client.messages.create(request);
  const text = plain.content.find((b) => b.type === "text").text;
  // A word from the middle of the greedy reply: the same request stopped there.
  const words = text.split(/\s+/).filter((w) => w.length > 2);
  assert.ok(words.length >= 2, "reply too short to pick a stop sequence from: " + text);
  const stop = words[1];
  const stopped = await client.messages.create({ ...request, stop_sequences: [stop] });
  assert.equal(stopped.stop_reason, "stop_sequence");
  assert.equal(stopped.stop_sequence, stop);
  const cut = stopped.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  assert.ok(!cut.includes(stop) && text.startsWith(cut), JSON.stringify({ text, cut, stop }));
});

const weatherTool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

test("tools and a tool_result turn are taken, streamed and not", async () => {
  const conversation = {
    model, max_tokens: 16, temperature: 0, tools: [weatherTool], tool_choice: { type: "auto" },
    messages: [
      { role: "user", content: "What is the weather in Jerusalem?" },
      { role: "assistant", content: [
        { type: "thinking", thinking: "The tool knows.", signature: "" },
        { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Jerusalem" } },
      ] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "toolu_01", content: [{ type: "text", text: "Sunny, 24 C" }] },
        { type: "text", text: "Say it in the words of the Bible." },
      ] },
    ],
  };
  const msg = await client.messages.create(conversation);
  assert.ok(["end_turn", "max_tokens", "tool_use"].includes(msg.stop_reason), msg.stop_reason);
  for (const block of msg.content) assert.ok(["text", "thinking", "tool_use"].includes(block.type), block.type);
  const final = await client.messages.stream(conversation).finalMessage();
  assert.deepEqual(final.content, msg.content);
  assert.equal(final.stop_reason, msg.stop_reason);
});

test("countTokens counts the prompt the reply reads", async () => {
  const { model: m, system, messages } = request;
  const counted = await client.messages.countTokens({ model: m, system, messages, tools: [weatherTool] });
  const reply = await client.messages.create({ ...request, tools: [weatherTool], max_tokens: 1 });
  assert.equal(counted.input_tokens, reply.usage.input_tokens + reply.usage.cache_read_input_tokens);
  // The built-in model's template renders user and assistant turns only (no system, no tools).
  const longer = await client.messages.countTokens({
    model: m, system, messages: [...messages, { role: "assistant", content: "God." }, { role: "user", content: "When?" }],
  });
  assert.ok(longer.input_tokens > counted.input_tokens, JSON.stringify({ longer, counted }));
});

test("an image block is a 400 BadRequestError naming the block", async () => {
  await assert.rejects(
    client.messages.create({ ...request, messages: [{ role: "user", content: [
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] }),
    (err) => {
      assert.ok(err instanceof Anthropic.BadRequestError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.type, "invalid_request_error");
      assert.match(err.apiMessage, /messages\[0\]\.content\[0\]: image blocks are not supported/);
      return true;
    });
});

test("max_tokens beyond the context is a 400 that says so", async () => {
  await assert.rejects(client.messages.create({ ...request, max_tokens: 100000 }), (err) => {
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.equal(err.type, "invalid_request_error");
    // Anthropic's own words, which Claude Code reads to retry with a max_tokens that fits.
    assert.match(err.apiMessage, /^input length and `max_tokens` exceed context limit: \d+ \+ 100000 > 512, /);
    return true;
  });
});

test("a forced tool call reaches the client as a tool_use block", async () => {
  // An enum keeps the argument short: the built-in model would otherwise write prose into it
  // until max_tokens (the grammar allows any string).
  const cityTool = {
    name: "get_weather",
    description: "The weather in a city",
    input_schema: { type: "object", properties: { city: { type: "string", enum: ["Jerusalem", "Babylon"] } }, required: ["city"] },
  };
  for (const tool_choice of [{ type: "tool", name: "get_weather" }, { type: "any" }]) {
    const msg = await client.messages.create({ ...request, max_tokens: 256, tools: [cityTool], tool_choice });
    assert.equal(msg.stop_reason, "tool_use", JSON.stringify(msg.content));
    const use = msg.content.find((b) => b.type === "tool_use");
    assert.ok(use, JSON.stringify(msg.content));
    assert.equal(use.name, "get_weather");
    assert.match(use.id, /^toolu_/);
    assert.ok(["Jerusalem", "Babylon"].includes(use.input.city), JSON.stringify(use.input));
  }
});

test("a wrong API key is a 401 AuthenticationError", async () => {
  const wrong = new Anthropic({ apiKey: "not-the-key", baseURL: server.baseURL, maxRetries: 0 });
  await assert.rejects(wrong.messages.create(request), (err) => {
    assert.ok(err instanceof Anthropic.AuthenticationError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.type, "authentication_error");
    return true;
  });
  // The key as a bearer token (authToken) is taken too.
  const bearer = new Anthropic({ apiKey: null, authToken: apiKey, baseURL: server.baseURL, maxRetries: 0 });
  const msg = await bearer.messages.create({ ...request, max_tokens: 2 });
  assert.equal(msg.type, "message");
});
