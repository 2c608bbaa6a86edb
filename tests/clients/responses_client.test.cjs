// The server driven by the official `openai` npm client's Responses API: what the library sends
// and parses must work end to end: responses.create (and the output_text it computes), the
// stream helper (responses.stream with its typed events and finalResponse()), a conversation
// continued by previous_response_id, function tools with a function_call_output turn,
// retrieve/delete of stored responses, input token counting, a forced call (sampled under the
// call's grammar, so that the built-in model makes one), errors and authentication.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const OpenAI = require("openai");
const { startServer } = require("./server.cjs");

const apiKey = "client-test-key";
let server, client;

test.before(async () => {
  server = await startServer({ apiKey });
  // maxRetries 0: a failure shows at once instead of after the client's backoff.
  client = new OpenAI({ apiKey, baseURL: server.baseURL + "/v1", maxRetries: 0, timeout: 60000 });
});
test.after(() => server && server.stop());

// Any model name is accepted and echoed; temperature 0 is greedy, so the stream must give
// exactly the non-streamed reply.
const model = "gpt-5-codex";
const request = {
  model,
  input: "Who made the heaven and the earth?",
  max_output_tokens: 24,
  temperature: 0,
};

function messageText(response) {
  return response.output.filter((i) => i.type === "message")
    .flatMap((i) => i.content).filter((p) => p.type === "output_text").map((p) => p.text).join("");
}

test("responses.create returns a whole response with output_text", async () => {
  const r = await client.responses.create({ ...request, metadata: { run: "1" } });
  assert.match(r.id, /^resp_/);
  assert.equal(r.object, "response");
  assert.equal(r.model, model);
  assert.ok(["completed", "incomplete"].includes(r.status), r.status);
  if (r.status === "incomplete") assert.deepEqual(r.incomplete_details, { reason: "max_output_tokens" });
  else assert.equal(r.incomplete_details, null);
  assert.equal(r.error, null);
  const msg = r.output.find((i) => i.type === "message");
  assert.ok(msg, JSON.stringify(r.output));
  assert.match(msg.id, /^msg_/);
  assert.equal(msg.role, "assistant");
  assert.deepEqual(msg.content.map((p) => p.type), ["output_text"]);
  assert.deepEqual(msg.content[0].annotations, []);
  assert.ok(r.output_text.length > 0, "empty output_text");
  assert.equal(r.output_text, messageText(r));
  const u = r.usage;
  assert.ok(u.input_tokens > 5 && u.output_tokens > 0 && u.output_tokens <= 24, JSON.stringify(u));
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
  assert.equal(typeof u.input_tokens_details.cached_tokens, "number");
  assert.equal(u.output_tokens_details.reasoning_tokens, 0);
  // The settings, echoed.
  assert.equal(r.max_output_tokens, 24);
  assert.equal(r.temperature, 0);
  assert.equal(r.store, true);
  assert.deepEqual(r.metadata, { run: "1" });
  assert.deepEqual(r.text, { format: { type: "text" } });
});

test("responses.stream gives the same response, event by event", async () => {
  const plain = await client.responses.create(request);
  const stream = client.responses.stream(request);
  const seen = [];
  let text = "";
  stream.on("event", (event) => seen.push(event));
  stream.on("response.output_text.delta", (event) => { text += event.delta; });
  const final = await stream.finalResponse();
  const types = seen.map((e) => e.type);
  assert.equal(types[0], "response.created");
  assert.equal(types[1], "response.in_progress");
  assert.equal(types.at(-1), plain.status === "completed" ? "response.completed" : "response.incomplete");
  assert.deepEqual(seen.map((e) => e.sequence_number), seen.map((_, i) => i));
  for (const t of ["response.output_item.added", "response.content_part.added", "response.output_text.done",
    "response.content_part.done", "response.output_item.done"]) assert.ok(types.includes(t), t + " missing: " + types.join(" "));
  assert.ok(types.filter((t) => t === "response.output_text.delta").length > 1, "not streamed: " + types.join(" "));
  assert.match(final.id, /^resp_/);
  assert.equal(final.model, model);
  assert.equal(text, plain.output_text);
  // output_text is added by create() and retrieve(), not by the stream helper.
  assert.equal(messageText(final), plain.output_text);
  // The helper takes the response of response.completed; after response.incomplete it keeps its
  // own accumulation (status in_progress, no usage), so those are read from the last event.
  const done = seen.at(-1).response;
  assert.equal(done.id, final.id);
  assert.equal(done.status, plain.status);
  assert.equal(done.usage.output_tokens, plain.usage.output_tokens);
  // The same prompt twice: the second reads it from the KV cache, and says so.
  assert.equal(done.usage.input_tokens, plain.usage.input_tokens);
  assert.ok(done.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(done.usage));
});

test("previous_response_id continues the conversation from the KV cache", async () => {
  const first = await client.responses.create(request);
  const second = await client.responses.create({
    model, input: "And what did he say?", previous_response_id: first.id, max_output_tokens: 8, temperature: 0,
  });
  assert.equal(second.previous_response_id, first.id);
  assert.ok(second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens - 1, JSON.stringify(second.usage));
  // The first turn (and its reply) were already in the cache.
  assert.ok(second.usage.input_tokens_details.cached_tokens >= first.usage.input_tokens, JSON.stringify(second.usage));
  const counted = await client.responses.inputTokens.count({ model, input: "And what did he say?", previous_response_id: first.id });
  assert.equal(counted.object, "response.input_tokens");
  assert.equal(counted.input_tokens, second.usage.input_tokens);
});

const weatherTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

test("function tools and a function_call_output turn are taken, streamed and not", async () => {
  const conversation = {
    model, max_output_tokens: 16, temperature: 0, tools: [weatherTool], tool_choice: "auto",
    input: [
      { role: "user", content: "What is the weather in Jerusalem?" },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "The tool knows." }] },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: JSON.stringify({ city: "Jerusalem" }) },
      { type: "function_call_output", call_id: "call_1", output: "Sunny, 24 C" },
      { role: "user", content: [{ type: "input_text", text: "Say it in the words of the Bible." }] },
    ],
  };
  const r = await client.responses.create(conversation);
  assert.deepEqual(r.tools.map((t) => [t.type, t.name]), [["function", "get_weather"]]);
  assert.equal(r.tool_choice, "auto");
  for (const item of r.output) assert.ok(["message", "reasoning", "function_call"].includes(item.type), item.type);
  const stream = client.responses.stream(conversation);
  let last = null;
  stream.on("event", (event) => { last = event; });
  const final = await stream.finalResponse();
  assert.equal(messageText(final), r.output_text);
  assert.equal(last.response.status, r.status);
});

test("retrieve gives a stored response back; delete removes it", async () => {
  const r = await client.responses.create({ ...request, max_output_tokens: 4 });
  const kept = await client.responses.retrieve(r.id);
  assert.equal(kept.id, r.id);
  assert.equal(kept.output_text, r.output_text);
  assert.deepEqual(kept.usage, r.usage);
  await client.responses.delete(r.id);
  await assert.rejects(client.responses.retrieve(r.id), (err) => {
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.equal(err.status, 404);
    return true;
  });
  // store: false keeps nothing.
  const unstored = await client.responses.create({ ...request, max_output_tokens: 2, store: false });
  await assert.rejects(client.responses.retrieve(unstored.id), OpenAI.NotFoundError);
});

test("an unknown previous_response_id is a 404 naming the field", async () => {
  await assert.rejects(client.responses.create({ ...request, previous_response_id: "resp_gone" }), (err) => {
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.equal(err.param, "previous_response_id");
    assert.match(err.message, /no response with id 'resp_gone'/);
    return true;
  });
});

test("a forced call (tool_choice required) reaches the client as a function_call item", async () => {
  // An enum bounds the argument: a free string would let the built-in model write on to the limit.
  const cityTool = { ...weatherTool, parameters: {
    type: "object", properties: { city: { type: "string", enum: ["Jerusalem", "Bethlehem"] } }, required: ["city"] } };
  const r = await client.responses.create({
    ...request, max_output_tokens: 200, input: "What is the weather in Jerusalem?", tools: [cityTool], tool_choice: "required",
  });
  const calls = r.output.filter((i) => i.type === "function_call");
  assert.equal(calls.length, 1, JSON.stringify(r.output));
  assert.equal(calls[0].name, "get_weather");
  assert.match(calls[0].call_id, /^call_/);
  assert.ok(["Jerusalem", "Bethlehem"].includes(JSON.parse(calls[0].arguments).city), calls[0].arguments);
  assert.equal(r.tool_choice, "required");
});

test("max_output_tokens beyond the context is a 400 that says so", async () => {
  await assert.rejects(client.responses.create({ ...request, max_output_tokens: 100000 }), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.code, "context_length_exceeded");
    assert.equal(err.param, "max_output_tokens");
    return true;
  });
});

test("a wrong API key is a 401 AuthenticationError", async () => {
  const wrong = new OpenAI({ apiKey: "not-the-key", baseURL: server.baseURL + "/v1", maxRetries: 0 });
  await assert.rejects(wrong.responses.create(request), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError, String(err));
    assert.equal(err.status, 401);
    return true;
  });
});
