// The server driven by the official `openai` npm client: what the library sends and parses must
// work end to end (lists, chat with and without streaming, completions, usage, errors, auth).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const OpenAI = require("openai");
const { startServer } = require("./server.cjs");

const apiKey = "client-test-key";
let server, client, model;

test.before(async () => {
  server = await startServer({ apiKey });
  // maxRetries 0: a failure shows at once instead of after the client's backoff.
  client = new OpenAI({ apiKey, baseURL: server.baseURL + "/v1", maxRetries: 0, timeout: 60000 });
});
test.after(() => server && server.stop());

test("models.list names the loaded model", async () => {
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  assert.equal(models.length, 1);
  assert.equal(models[0].object, "model");
  assert.equal(models[0].id, "strata-kjv-moe");
  model = models[0].id;
});

// Same seed, temperature 0: the stream's deltas must join to exactly the non-streamed text.
const chatRequest = {
  messages: [{ role: "user", content: "Who made the heaven and the earth?" }],
  max_tokens: 24, temperature: 0, seed: 7,
};

test("chat completion, plain and streamed, agree", async () => {
  const plain = await client.chat.completions.create({ model, ...chatRequest });
  assert.equal(plain.object, "chat.completion");
  const choice = plain.choices[0];
  assert.equal(choice.message.role, "assistant");
  assert.ok(choice.message.content.length > 0, "empty reply");
  assert.ok(["stop", "length"].includes(choice.finish_reason));
  const u = plain.usage;
  assert.ok(u.prompt_tokens > 0 && u.completion_tokens > 0 && u.completion_tokens <= 24, JSON.stringify(u));
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);

  const stream = await client.chat.completions.create({
    model, ...chatRequest, stream: true, stream_options: { include_usage: true },
  });
  let text = "", finish = null, usage = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, "chat.completion.chunk");
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;  // the include_usage chunk has no choices
    text += c.delta.content || "";
    if (c.finish_reason) finish = c.finish_reason;
  }
  assert.ok(chunks > 2, `only ${chunks} chunks: not streamed`);
  assert.equal(text, choice.message.content);
  assert.equal(finish, choice.finish_reason);
  assert.deepEqual(
    [usage.prompt_tokens, usage.completion_tokens],
    [u.prompt_tokens, u.completion_tokens]);
});

test("completion continues a prompt", async () => {
  const r = await client.completions.create({
    model, prompt: "In the beginning God created", max_tokens: 12, temperature: 0,
  });
  assert.equal(r.object, "text_completion");
  assert.ok(r.choices[0].text.length > 0);
  assert.equal(r.usage.completion_tokens <= 12, true);
  assert.ok(r.usage.prompt_tokens > 0);
});

test("max_tokens beyond the context is a 400 in the OpenAI error shape", async () => {
  await assert.rejects(
    client.chat.completions.create({ model, ...chatRequest, max_tokens: 100000 }),
    (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.type, "invalid_request_error");
      assert.equal(err.code, "context_length_exceeded");
      assert.match(err.error.message, /max_tokens/);
      return true;
    });
});

test("a wrong API key is a 401 AuthenticationError", async () => {
  const wrong = new OpenAI({ apiKey: "not-the-key", baseURL: server.baseURL + "/v1", maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, "invalid_api_key");
    return true;
  });
});
