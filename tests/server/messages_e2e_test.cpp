// End to end: POST /v1/messages and /v1/messages/count_tokens on the real HTTP server with the
// tiny model, whose output is forced (the scheduler's test hook) so that every answer is exact:
// the message shape, each stop_reason, the stream's event order adding up to the whole answer,
// thinking and tool_use blocks from the shared output parser, errors and authentication in
// Anthropic's shape while the OpenAI routes keep theirs. Every loop and wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "server/sse.h"
#include "test_server.h"

namespace strata::server {
namespace {

using json = nlohmann::json;
using test::post;
using test::post_stream;
using test::Streamed;
using test::TestServer;

// The tiny model with a template that names the Hermes call syntax, so that the server parses
// <tool_call> blocks (and, as for every format, a leading <think> block).
Engine& hermes_model() {
    static Engine* model = [] {
        const std::string tmpl = std::string(test::kTinyChatTemplate) + "{# calls are written as <tool_call>{...}</tool_call> #}";
        auto lm = Engine::open({.model_path = test::tiny_model_path(), .chat_template = tmpl});
        STRATA_CHECK(lm.is_ok(), lm.status().message().c_str());
        return std::move(*lm).release();
    }();
    return *model;
}

// A server whose every reply is `script` then the end token (or up to max_tokens, if fewer).
class ScriptedServer {
public:
    explicit ScriptedServer(const std::string& script, ServerOptions o = {}) {
        Engine& model = hermes_model();
        tokens_ = model.tokenizer->encode(script, false, false);
        const int32_t eos = model.tokenizer->eos_id();
        SchedulerOptions so{.n_slots = 1, .n_ctx = 512, .n_batch = 64, .max_queue = 4};
        so.forced_next_token = [this, eos](const std::vector<int32_t>&, int64_t n) {
            return n < static_cast<int64_t>(tokens_.size()) ? tokens_[static_cast<size_t>(n)] : eos;
        };
        server_ = std::make_unique<TestServer>(std::move(o), so, &model);
    }
    httplib::Client client() const { return server_->client(); }
    int64_t script_tokens() const { return static_cast<int64_t>(tokens_.size()); }

private:
    std::vector<int32_t> tokens_;
    std::unique_ptr<TestServer> server_;
};

json request(const std::string& text, int max_tokens = 64) {
    return {{"model", "claude-sonnet-4-5"}, {"max_tokens", max_tokens}, {"messages", {{{"role", "user"}, {"content", text}}}}};
}

const json kWeatherTool = {{"name", "get_weather"},
                           {"description", "The weather in a city"},
                           {"input_schema", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}}};

// The named events of a complete stream.
std::vector<std::pair<std::string, json>> events_of(const Streamed& s) {
    auto events = parse_sse_events(s.body);
    EXPECT_TRUE(events) << "truncated stream: " << s.body;
    std::vector<std::pair<std::string, json>> out;
    if (!events) return out;
    for (const auto& e : *events) {
        json data = json::parse(e.data);
        EXPECT_EQ(data["type"], e.name) << "the event line and the data's type differ: " << e.data;
        out.emplace_back(e.name, std::move(data));
    }
    return out;
}

// The event names with repeats of content_block_delta folded into one, e.g.
// "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop".
std::string order_of(const std::vector<std::pair<std::string, json>>& events) {
    std::string out;
    std::string last;
    for (const auto& event : events) {
        const std::string& name = event.first;
        if (name == last && name == "content_block_delta") continue;
        if (!out.empty()) out += ' ';
        out += name;
        last = name;
    }
    return out;
}

void expect_anthropic_error(const httplib::Result& r, int status, const std::string& type, const std::string& says) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["type"], "error") << r->body;
    EXPECT_EQ(j["error"]["type"], type) << r->body;
    ASSERT_TRUE(j["error"]["message"].is_string()) << r->body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find(says), std::string::npos) << r->body;
}

TEST(MessagesE2E, AWholeMessageInAnthropicsShape) {
    ScriptedServer srv("In the beginning.");
    auto c = srv.client();
    auto r = post(c, "/v1/messages", request("Genesis 1:1?"));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    json m = json::parse(r->body);
    EXPECT_EQ(m["id"].get<std::string>().rfind("msg_", 0), 0u);
    EXPECT_EQ(m["type"], "message");
    EXPECT_EQ(m["role"], "assistant");
    EXPECT_EQ(m["model"], "claude-sonnet-4-5");  // the name asked for, whatever the server serves
    EXPECT_EQ(m["content"], json::parse(R"([{"type":"text","text":"In the beginning."}])"));
    EXPECT_EQ(m["stop_reason"], "end_turn");
    EXPECT_TRUE(m["stop_sequence"].is_null());
    const int64_t prompt = static_cast<int64_t>(std::string("<user>Genesis 1:1?\n<assistant>").size());  // byte-level vocabulary
    EXPECT_EQ(m["usage"]["input_tokens"], prompt);
    EXPECT_EQ(m["usage"]["cache_read_input_tokens"], 0);
    EXPECT_EQ(m["usage"]["output_tokens"], srv.script_tokens() + 1);  // the end token counts

    // The same prompt again: all but its last token come from the KV cache, counted apart.
    json again = json::parse(post(c, "/v1/messages", request("Genesis 1:1?"))->body);
    EXPECT_EQ(again["usage"]["cache_read_input_tokens"], prompt - 1);
    EXPECT_EQ(again["usage"]["input_tokens"], 1);
}

TEST(MessagesE2E, StopReasonsMaxTokensAndStopSequence) {
    ScriptedServer srv("Amen. END of the book");
    auto c = srv.client();
    json limited = json::parse(post(c, "/v1/messages", request("x", 3))->body);
    EXPECT_EQ(limited["stop_reason"], "max_tokens");
    EXPECT_EQ(limited["usage"]["output_tokens"], 3);
    EXPECT_EQ(limited["content"][0]["text"], "Ame");

    json body = request("x");
    body["stop_sequences"] = {"nothing", "END"};
    json stopped = json::parse(post(c, "/v1/messages", body)->body);
    EXPECT_EQ(stopped["stop_reason"], "stop_sequence");
    EXPECT_EQ(stopped["stop_sequence"], "END");
    // Cut before the stop sequence; the output parser drops the reply's trailing space.
    EXPECT_EQ(stopped["content"][0]["text"], "Amen.");
}

TEST(MessagesE2E, TheStreamsEventsAddUpToTheWholeMessage) {
    ScriptedServer srv("Let there be light: and there was light.");
    auto c = srv.client();
    json body = request("Genesis 1:3?");
    body["system"] = "Answer with the verse.";
    json whole = json::parse(post(c, "/v1/messages", body)->body);

    body["stream"] = true;
    Streamed s = post_stream(c, "/v1/messages", body);
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.content_type, "text/event-stream");
    const auto events = events_of(s);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(order_of(events),
              "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop");
    const json& start = events.front().second["message"];
    EXPECT_EQ(start["id"].get<std::string>().rfind("msg_", 0), 0u);
    EXPECT_EQ(start["model"], "claude-sonnet-4-5");
    EXPECT_EQ(start["content"], json::array());
    EXPECT_TRUE(start["stop_reason"].is_null());
    EXPECT_EQ(start["usage"]["input_tokens"], whole["usage"]["input_tokens"].get<int>() + whole["usage"]["cache_read_input_tokens"].get<int>());
    std::string text;
    for (const auto& [name, data] : events) {
        if (name != "content_block_delta") continue;
        EXPECT_EQ(data["index"], 0);
        EXPECT_EQ(data["delta"]["type"], "text_delta");
        text += data["delta"]["text"].get<std::string>();
    }
    EXPECT_EQ(text, whole["content"][0]["text"].get<std::string>());
    const json& delta = events[events.size() - 2].second;
    EXPECT_EQ(delta["delta"]["stop_reason"], "end_turn");
    EXPECT_TRUE(delta["delta"]["stop_sequence"].is_null());
    EXPECT_EQ(delta["usage"]["output_tokens"], whole["usage"]["output_tokens"]);
}

TEST(MessagesE2E, AToolCallIsAToolUseBlockAndItsResultGoesBack) {
    ScriptedServer srv("<think>Ask the tool.</think><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
    auto c = srv.client();
    json body = request("Weather in Paris?", 200);  // the script is ~120 tokens of the byte-level vocabulary
    body["tools"] = json::array({kWeatherTool});
    body["tool_choice"] = {{"type", "auto"}};
    auto r = post(c, "/v1/messages", body);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json m = json::parse(r->body);
    EXPECT_EQ(m["stop_reason"], "tool_use");
    ASSERT_EQ(m["content"].size(), 2u) << m.dump(2);
    EXPECT_EQ(m["content"][0], json::parse(R"({"type":"thinking","thinking":"Ask the tool.","signature":""})"));
    const json& call = m["content"][1];
    EXPECT_EQ(call["type"], "tool_use");
    EXPECT_EQ(call["id"].get<std::string>().rfind("toolu_", 0), 0u);
    EXPECT_EQ(call["name"], "get_weather");
    EXPECT_EQ(call["input"], json::parse(R"({"city":"Paris"})"));

    body["stream"] = true;
    const auto events = events_of(post_stream(c, "/v1/messages", body));
    EXPECT_EQ(order_of(events),
              "message_start ping content_block_start content_block_delta content_block_stop "
              "content_block_start content_block_delta content_block_stop message_delta message_stop");
    std::string input_json;
    for (const auto& [name, data] : events) {
        if (name == "content_block_start" && data["index"] == 1) {
            EXPECT_EQ(data["content_block"]["type"], "tool_use");
            EXPECT_EQ(data["content_block"]["name"], "get_weather");
            EXPECT_EQ(data["content_block"]["input"], json::object());
        }
        if (name == "content_block_delta" && data["delta"]["type"] == "input_json_delta") input_json += data["delta"]["partial_json"].get<std::string>();
    }
    EXPECT_EQ(json::parse(input_json), call["input"]);
    EXPECT_EQ(events[events.size() - 2].second["delta"]["stop_reason"], "tool_use");

    // The client runs the tool and sends the call and its result back.
    json follow_up = request("Weather in Paris?");
    follow_up["tools"] = json::array({kWeatherTool});
    follow_up["messages"].push_back({{"role", "assistant"}, {"content", m["content"]}});
    follow_up["messages"].push_back(
        {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", call["id"]}, {"content", "18 C, sunny"}}}}});
    auto r2 = post(c, "/v1/messages", follow_up);
    ASSERT_TRUE(r2);
    EXPECT_EQ(r2->status, 200) << r2->body;
}

TEST(MessagesE2E, CountTokensCountsThePromptAsTheReplyDoes) {
    ScriptedServer srv("ok");
    auto c = srv.client();
    json body = request("How many tokens is this?");
    body["system"] = {{{"type", "text"}, {"text", "You count."}}};
    body["tools"] = json::array({kWeatherTool});
    json counting = body;
    counting.erase("max_tokens");
    auto counted = post(c, "/v1/messages/count_tokens", counting);
    ASSERT_TRUE(counted);
    ASSERT_EQ(counted->status, 200) << counted->body;
    json n = json::parse(counted->body);
    EXPECT_EQ(n, json({{"input_tokens", n["input_tokens"]}}));  // nothing else
    json reply = json::parse(post(c, "/v1/messages", body)->body);
    EXPECT_EQ(n["input_tokens"], reply["usage"]["input_tokens"]);
    EXPECT_EQ(n["input_tokens"], std::string("<system>You count.\n<user>How many tokens is this?\n<tools>1\n<assistant>").size());
}

TEST(MessagesE2E, BadRequestsGetAnthropicErrorsAndTheServerStaysUp) {
    ServerOptions o;
    o.max_body_bytes = 64 << 10;
    ScriptedServer srv("fine", o);
    auto c = srv.client();
    expect_anthropic_error(c.Post("/v1/messages", "{\"model\": ", "application/json"), 400, "invalid_request_error", "not valid JSON");
    expect_anthropic_error(post(c, "/v1/messages", {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "x"}}}}}), 400,
                           "invalid_request_error", "max_tokens: required");
    json wrong = request("x");
    wrong["messages"][0]["content"] = {{{"type", "text"}, {"text", 42}}};
    expect_anthropic_error(post(c, "/v1/messages", wrong), 400, "invalid_request_error", "messages[0].content[0].text: expected a string");
    json image = request("x");
    image["messages"][0]["content"] = {{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", "AA=="}}}}};
    expect_anthropic_error(post(c, "/v1/messages", image), 400, "invalid_request_error", "image blocks are not supported");
    json forced = request("x");
    forced["tools"] = json::array({kWeatherTool});
    forced["tool_choice"] = {{"type", "tool"}, {"name", "no_such_tool"}};
    expect_anthropic_error(post(c, "/v1/messages", forced), 400, "invalid_request_error", "expected the name of one of the request's tools");
    expect_anthropic_error(post(c, "/v1/messages", request("x", 100000)), 400, "invalid_request_error",
                           "input length and `max_tokens` exceed context limit: 19 + 100000 > 512");
    expect_anthropic_error(post(c, "/v1/messages", request(std::string(600, 'x'))), 400, "invalid_request_error",
                           "prompt is too long: 618 tokens > 511 maximum");
    expect_anthropic_error(post(c, "/v1/messages", request(std::string(100 << 10, 'x'))), 413, "request_too_large", "larger than");
    expect_anthropic_error(c.Get("/v1/messages"), 404, "not_found_error", "no route GET /v1/messages");
    expect_anthropic_error(post(c, "/v1/messages/batches", request("x")), 404, "not_found_error", "/v1/messages/count_tokens");
    // The OpenAI routes keep their own shape.
    auto openai = c.Post("/v1/chat/completions", "{\"messages\": ", "application/json");
    ASSERT_TRUE(openai);
    EXPECT_EQ(json::parse(openai->body)["error"]["code"], "invalid_json");
    auto ok = post(c, "/v1/messages", request("still there?"));
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST(MessagesE2E, LoadingIsAnOverloadedError) {
    TestServer srv({}, {}, /*model=*/nullptr);
    auto c = srv.client();
    expect_anthropic_error(post(c, "/v1/messages", request("x")), 529, "overloaded_error", "still loading");
    expect_anthropic_error(post(c, "/v1/messages/count_tokens", request("x")), 529, "overloaded_error", "still loading");
}

// A server whose replies never end on their own: every generated token is "a".
std::unique_ptr<TestServer> endless_server(ServerOptions o, size_t max_queue) {
    Engine& model = hermes_model();
    const int32_t a = model.tokenizer->encode("a", false, false).at(0);
    SchedulerOptions so{.n_slots = 1, .n_ctx = 32768, .n_batch = 64, .max_queue = max_queue};
    so.forced_next_token = [a](const std::vector<int32_t>&, int64_t) { return a; };
    return std::make_unique<TestServer>(std::move(o), so, &model);
}

TEST(MessagesE2E, AFullQueueIsOverloadedAndATimeoutMidStreamIsAnErrorEvent) {
    ServerOptions o;
    o.timeout = std::chrono::seconds(1);
    auto srv = endless_server(o, /*max_queue=*/0);
    std::atomic<bool> started{false};
    Streamed long_one;
    std::thread holder([&] {
        auto hc = srv->client();
        json body = request("hold the slot", 32000);  // far more than 1 s of tokens
        body["stream"] = true;
        long_one = post_stream(hc, "/v1/messages", body, [&](const std::string&) {
            started = true;
            return true;
        });
    });
    auto c = srv->client();
    for (int i = 0; i < 400 && !started; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(started);
    auto busy = post(c, "/v1/messages", request("x"));
    expect_anthropic_error(busy, 529, "overloaded_error", "queue");
    EXPECT_EQ(busy->get_header_value("Retry-After"), "1");
    holder.join();  // the 1 s limit ends the held stream

    // The status line went out with the stream's first event; the timeout arrives as an error event.
    ASSERT_EQ(long_one.status, 200);
    const auto events = events_of(long_one);
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events.front().first, "message_start");
    EXPECT_EQ(events.back().first, "error");
    EXPECT_EQ(events.back().second["error"]["type"], "api_error");
    EXPECT_NE(events.back().second["error"]["message"].get<std::string>().find("timed out"), std::string::npos) << events.back().second;
}

TEST(MessagesE2E, TheKeyIsTakenAsXApiKeyOrBearer) {
    ServerOptions o;
    o.api_key = "s3cret-key";
    ScriptedServer srv("yes", o);
    auto c = srv.client();
    expect_anthropic_error(post(c, "/v1/messages", request("x")), 401, "authentication_error", "x-api-key");
    expect_anthropic_error(post(c, "/v1/messages", request("x"), {{"x-api-key", "s3cret-kez"}}), 401, "authentication_error", "API key");
    expect_anthropic_error(post(c, "/v1/messages/count_tokens", request("x"), {{"x-api-key", "s3cret-key-longer"}}), 401,
                           "authentication_error", "API key");
    EXPECT_EQ(post(c, "/v1/messages", request("x"), {{"x-api-key", "s3cret-key"}})->status, 200);
    // A refused request's body is never read: the connection closes, so the client's next request
    // on a kept-alive connection is not read from that body (Claude Code retries that way).
    {
        auto kept = srv.client();
        kept.set_keep_alive(true);
        auto refused = post(kept, "/v1/messages", request(std::string(32 << 10, 'x')), {{"x-api-key", "wrong"}});
        ASSERT_TRUE(refused);
        EXPECT_EQ(refused->status, 401);
        EXPECT_EQ(refused->get_header_value("Connection"), "close");
        auto next = post(kept, "/v1/messages", request("x"), {{"x-api-key", "s3cret-key"}});
        ASSERT_TRUE(next);
        EXPECT_EQ(next->status, 200) << next->body;
    }
    EXPECT_EQ(c.Head("/")->status, 200);  // Claude Code's reachability check
    EXPECT_EQ(post(c, "/v1/messages", request("x"), {{"Authorization", "Bearer s3cret-key"}})->status, 200);
    EXPECT_EQ(post(c, "/v1/messages/count_tokens", request("x"), {{"x-api-key", "s3cret-key"}})->status, 200);
    // The OpenAI routes take x-api-key too, and answer a missing key in their own shape.
    EXPECT_EQ(c.Get("/v1/models", {{"x-api-key", "s3cret-key"}})->status, 200);
    auto openai = c.Get("/v1/models");
    ASSERT_TRUE(openai);
    EXPECT_EQ(openai->status, 401);
    EXPECT_EQ(json::parse(openai->body)["error"]["code"], "invalid_api_key");
}

}  // namespace
}  // namespace strata::server
