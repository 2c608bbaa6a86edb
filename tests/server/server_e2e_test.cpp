// End to end: the real HTTP server on 127.0.0.1 (an ephemeral port) with the tiny model, driven by
// a real HTTP client. What a client sees: endpoints and their shapes, streaming that matches the
// non-streamed answer, prefix reuse reported in usage, every kind of bad request, auth, CORS,
// limits, the full queue, disconnects and concurrency. Every loop and wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "server/sse.h"
#include "test_server.h"

namespace strata::server {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using test::post;
using test::post_stream;
using test::Streamed;
using test::TestServer;
using test::tiny_model;

json chat_request(const std::string& text, int max_tokens, bool stream = false) {
    json body = {{"model", "tiny"}, {"messages", {{{"role", "user"}, {"content", text}}}}, {"max_tokens", max_tokens},
                 {"temperature", 0}, {"stream", stream}, {"ignore_eos", true}};
    if (stream) body["stream_options"] = {{"include_usage", true}};
    return body;
}

// The JSON events of a complete SSE body, asserting it ends with [DONE].
std::vector<json> sse_json(const std::string& body) {
    auto events = parse_sse(body);
    EXPECT_TRUE(events) << "truncated stream: " << body;
    if (!events || events->empty()) return {};
    EXPECT_EQ(events->back(), "[DONE]");
    std::vector<json> out;
    for (size_t i = 0; i + 1 < events->size(); ++i) out.push_back(json::parse((*events)[i]));
    return out;
}

void expect_error(const httplib::Result& r, int status, const std::string& code, const std::string& says) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_TRUE(j["error"]["type"].is_string());
    if (!code.empty()) {
        EXPECT_EQ(j["error"]["code"], code) << r->body;
    }
    EXPECT_NE(j["error"]["message"].get<std::string>().find(says), std::string::npos) << r->body;
}

// Polls /health until `pred(health json)` holds or 20 s pass.
bool wait_health(httplib::Client& c, const std::function<bool(const json&)>& pred) {
    for (int i = 0; i < 400; ++i) {
        if (auto r = c.Get("/health"); r && pred(json::parse(r->body, nullptr, false))) return true;
        std::this_thread::sleep_for(50ms);
    }
    return false;
}

TEST(ServerE2E, HealthModelsMetricsAndPage) {
    TestServer srv({});
    auto c = srv.client();
    auto health = c.Get("/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(json::parse(health->body)["status"], "ready");
    auto models = c.Get("/v1/models");
    ASSERT_TRUE(models);
    EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "tiny");
    ASSERT_EQ(post(c, "/v1/completions", {{"prompt", "warm"}, {"max_tokens", 3}, {"ignore_eos", true}})->status, 200);
    auto metrics = c.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(metrics->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
    for (const char* name : {"strata_generated_tokens_total 3\n", "strata_queue_depth 0\n", "strata_slots_total 2\n",
                             "strata_kv_cache_capacity_tokens 1024\n", "strata_prompt_tokens_per_second ",
                             "strata_http_requests_total{route=\"/v1/completions\",status=\"200\"} 1\n"}) {
        EXPECT_NE(metrics->body.find(name), std::string::npos) << name << " missing from\n" << metrics->body;
    }
    auto page = c.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    EXPECT_NE(page->body.find("/v1/chat/completions"), std::string::npos);
    auto traversal = c.Get("/../../etc/passwd");  // no files behind the page
    ASSERT_TRUE(traversal);
    EXPECT_NE(traversal->status, 200);
}

TEST(ServerE2E, ChatCompletionAndItsStreamAgree) {
    TestServer srv({});
    auto c = srv.client();
    auto r = post(c, "/v1/chat/completions", chat_request("Tell me something.", 16));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = json::parse(r->body);
    EXPECT_EQ(j["object"], "chat.completion");
    EXPECT_EQ(j["model"], "tiny");
    EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(j["usage"]["completion_tokens"], 16);
    const int prompt_tokens = j["usage"]["prompt_tokens"];
    EXPECT_EQ(prompt_tokens, static_cast<int>(std::string("<user>Tell me something.\n<assistant>").size()));
    const std::string content = j["choices"][0]["message"]["content"];

    Streamed s = post_stream(c, "/v1/chat/completions", chat_request("Tell me something.", 16, true));
    ASSERT_EQ(s.status, 200);
    EXPECT_EQ(s.content_type, "text/event-stream");
    std::vector<json> chunks = sse_json(s.body);
    ASSERT_GE(chunks.size(), 3u);
    EXPECT_EQ(chunks.front()["choices"][0]["delta"]["role"], "assistant");
    std::string streamed;
    std::string finish;
    for (const auto& ch : chunks) {
        EXPECT_EQ(ch["id"], chunks.front()["id"]);
        if (ch["choices"].empty()) continue;
        const json& delta = ch["choices"][0]["delta"];
        if (delta.contains("content")) streamed += delta["content"].get<std::string>();
        if (!ch["choices"][0]["finish_reason"].is_null()) finish = ch["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(streamed, content);
    EXPECT_EQ(finish, "length");
    const json& usage = chunks.back()["usage"];  // include_usage: the last chunk, with no choices
    EXPECT_TRUE(chunks.back()["choices"].empty());
    EXPECT_EQ(usage["completion_tokens"], 16);
    // The same prompt again: all of it but the last token comes from the prefix cache.
    EXPECT_EQ(usage["prompt_tokens_details"]["cached_tokens"], prompt_tokens - 1);
}

TEST(ServerE2E, CompletionsStreamAndNot) {
    TestServer srv({});
    auto c = srv.client();
    auto r = post(c, "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 10}, {"temperature", 0}, {"ignore_eos", true}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = json::parse(r->body);
    EXPECT_EQ(j["object"], "text_completion");
    EXPECT_EQ(j["usage"]["prompt_tokens"], 16);
    Streamed s = post_stream(c, "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 10}, {"temperature", 0}, {"ignore_eos", true}, {"stream", true}});
    ASSERT_EQ(s.status, 200);
    std::string text;
    for (const auto& ch : sse_json(s.body)) text += ch["choices"][0]["text"].get<std::string>();
    EXPECT_EQ(text, j["choices"][0]["text"].get<std::string>());
}

TEST(ServerE2E, NextTurnReusesTheConversationsKv) {
    TestServer srv({});
    auto c = srv.client();
    json first = chat_request("First question?", 8);
    auto r1 = post(c, "/v1/chat/completions", first);
    ASSERT_TRUE(r1 && r1->status == 200);
    json a1 = json::parse(r1->body);
    const int first_prompt = a1["usage"]["prompt_tokens"];
    json second = first;
    second["messages"].push_back({{"role", "assistant"}, {"content", a1["choices"][0]["message"]["content"]}});
    second["messages"].push_back({{"role", "user"}, {"content", "And a follow-up?"}});
    auto r2 = post(c, "/v1/chat/completions", second);
    ASSERT_TRUE(r2 && r2->status == 200);
    json a2 = json::parse(r2->body);
    EXPECT_GE(a2["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), first_prompt);
    EXPECT_LT(a2["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), a2["usage"]["prompt_tokens"].get<int>());
}

TEST(ServerE2E, BadRequestsGetOpenAiErrors) {
    ServerOptions o;
    o.max_body_bytes = 64 << 10;
    o.strict_model_name = true;  // for the model_not_found case below
    TestServer srv(o);
    auto c = srv.client();
    expect_error(c.Post("/v1/chat/completions", "{\"messages\": [", "application/json"), 400, "invalid_json", "not valid JSON");
    expect_error(post(c, "/v1/chat/completions", {{"messages", "hi"}}), 400, "invalid_value", "messages: expected a non-empty list");
    expect_error(post(c, "/v1/chat/completions", {{"model", "gpt-4o"}, {"messages", {{{"role", "user"}, {"content", "x"}}}}}), 404,
                 "model_not_found", "'gpt-4o' does not exist");
    expect_error(post(c, "/v1/completions", {{"prompt", std::string(600, 'x')}}), 400, "context_length_exceeded",
                 "the prompt is 600 tokens, 89 more than the context of 512");
    expect_error(post(c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 600}}), 400, "context_length_exceeded", "89 too many");
    json n3 = chat_request("x", 4);
    n3["n"] = 3;
    expect_error(post(c, "/v1/chat/completions", n3), 400, "unsupported_parameter", "only 1 choice");
    expect_error(post(c, "/v1/completions", {{"prompt", {5, 100000}}}), 400, "invalid_value", "outside the vocabulary");
    expect_error(post(c, "/v1/completions", {{"prompt", std::string(100 << 10, 'x')}}), 413, "payload_too_large", "larger than");
    expect_error(c.Get("/v1/nothing"), 404, "not_found", "no route GET /v1/nothing");
    expect_error(c.Get("/v1/chat/completions"), 404, "not_found", "no route");
    // The server is still fine.
    EXPECT_EQ(post(c, "/v1/completions", {{"prompt", "ok"}, {"max_tokens", 2}})->status, 200);
}

TEST(ServerE2E, ApiKeyGuardsEverythingButHealthAndThePage) {
    ServerOptions o;
    o.api_key = "s3cret-key";
    TestServer srv(o);
    auto c = srv.client();
    expect_error(c.Get("/v1/models"), 401, "invalid_api_key", "API key");
    expect_error(c.Get("/metrics"), 401, "invalid_api_key", "API key");
    expect_error(post(c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}}), 401, "invalid_api_key", "API key");
    expect_error(c.Get("/v1/models", {{"Authorization", "Bearer s3cret-kez"}}), 401, "invalid_api_key", "API key");
    expect_error(c.Get("/v1/models", {{"Authorization", "Bearer s3cret-key-longer"}}), 401, "invalid_api_key", "API key");
    expect_error(c.Get("/v1/models", {{"Authorization", "s3cret-key"}}), 401, "invalid_api_key", "API key");
    EXPECT_EQ(c.Get("/v1/models", {{"Authorization", "Bearer s3cret-key"}})->status, 200);
    EXPECT_EQ(post(c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}}, {{"Authorization", "Bearer s3cret-key"}})->status, 200);
    EXPECT_EQ(c.Get("/health")->status, 200);
    EXPECT_EQ(c.Get("/")->status, 200);
}

TEST(ServerE2E, ConstantTimeCompare) {
    EXPECT_TRUE(constant_time_equals("abc", "abc"));
    EXPECT_FALSE(constant_time_equals("abd", "abc"));
    EXPECT_FALSE(constant_time_equals("ab", "abc"));
    EXPECT_FALSE(constant_time_equals("abcabc", "abc"));  // a repeated key is not the key
    EXPECT_FALSE(constant_time_equals("", "abc"));
    EXPECT_FALSE(constant_time_equals("", ""));  // no key configured never matches
}

TEST(ServerE2E, CorsOnlyWhenEnabled) {
    {
        TestServer srv({});
        auto c = srv.client();
        auto r = c.Get("/v1/models", {{"Origin", "http://evil.example"}});
        ASSERT_TRUE(r);
        EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
        auto pre = c.Options("/v1/chat/completions", {{"Origin", "http://evil.example"}});
        ASSERT_TRUE(pre);
        EXPECT_FALSE(pre->has_header("Access-Control-Allow-Origin"));
    }
    ServerOptions o;
    o.cors_origin = "http://localhost:3000";
    TestServer srv(o);
    auto c = srv.client();
    auto r = c.Get("/v1/models", {{"Origin", "http://localhost:3000"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
    auto pre = c.Options("/v1/chat/completions", {{"Origin", "http://localhost:3000"}, {"Access-Control-Request-Method", "POST"}});
    ASSERT_TRUE(pre);
    EXPECT_EQ(pre->status, 204);
    EXPECT_NE(pre->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
}

TEST(ServerE2E, LoadingAndFailedStatesAreReported) {
    TestServer srv({}, {}, /*model=*/nullptr);
    auto c = srv.client();
    auto h = c.Get("/health");
    ASSERT_TRUE(h);
    EXPECT_EQ(h->status, 503);
    EXPECT_EQ(json::parse(h->body)["status"], "loading");
    expect_error(post(c, "/v1/chat/completions", chat_request("x", 2)), 503, "model_loading", "still loading");
    srv.ctx().fail("model.gguf: bad magic");
    h = c.Get("/health");
    EXPECT_EQ(json::parse(h->body)["status"], "error");
    EXPECT_EQ(json::parse(h->body)["error"], "model.gguf: bad magic");
    expect_error(post(c, "/v1/completions", {{"prompt", "x"}}), 503, "model_load_failed", "bad magic");
}

TEST(ServerE2E, FullQueueAnswers503AndADisconnectFreesTheSlot) {
    TestServer srv({}, {.n_slots = 1, .n_ctx = 4096, .n_batch = 64, .max_queue = 0});
    auto c = srv.client();
    std::atomic<bool> release{false};
    Streamed long_one;
    std::thread holder([&] {
        auto hc = srv.client();
        long_one = post_stream(hc, "/v1/completions", {{"prompt", "hold the slot"}, {"max_tokens", 4000}, {"ignore_eos", true}, {"stream", true}},
                               [&](const std::string&) { return !release.load(); });
    });
    ASSERT_TRUE(wait_health(c, [](const json& h) { return h.value("slots_busy", 0) == 1; }));
    auto busy = post(c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}});
    expect_error(busy, 503, "server_overloaded", "queue");
    EXPECT_EQ(busy->get_header_value("Retry-After"), "1");
    release = true;  // the client hangs up mid-stream
    holder.join();
    ASSERT_TRUE(wait_health(c, [](const json& h) { return h.value("slots_busy", 1) == 0; }));
    auto m = c.Get("/metrics");
    EXPECT_NE(m->body.find("strata_requests_finished_total{outcome=\"cancelled\"} 1"), std::string::npos) << m->body;
    EXPECT_NE(m->body.find("strata_requests_rejected_total 1"), std::string::npos);
    EXPECT_EQ(post(c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}})->status, 200);
}

TEST(ServerE2E, ANonStreamingClientThatGivesUpCancelsItsGeneration) {
    TestServer srv({}, {.n_slots = 1, .n_ctx = 4096, .n_batch = 64, .max_queue = 4});
    {
        auto quitter = srv.client();
        quitter.set_read_timeout(0, 300000);  // gives up after 0.3 s, then hangs up
        auto r = post(quitter, "/v1/completions", {{"prompt", "a long answer"}, {"max_tokens", 4000}, {"ignore_eos", true}});
        EXPECT_FALSE(r && r->status == 200);
    }
    auto c = srv.client();
    ASSERT_TRUE(wait_health(c, [](const json& h) { return h.value("slots_busy", 1) == 0; }));
    auto m = c.Get("/metrics");
    EXPECT_NE(m->body.find("strata_requests_finished_total{outcome=\"cancelled\"} 1"), std::string::npos) << m->body;
}

TEST(ServerE2E, RequestTimeoutIs504) {
    ServerOptions o;
    o.timeout = std::chrono::seconds(1);
    TestServer srv(o, {.n_slots = 1, .n_ctx = 8192, .n_batch = 64, .max_queue = 4});
    auto c = srv.client();
    expect_error(post(c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 8000}, {"ignore_eos", true}}), 504, "timeout", "timed out");
}

TEST(ServerE2E, ConcurrentClientsAllGetWellFormedAnswers) {
    TestServer srv({}, {.n_slots = 2, .n_ctx = 512, .n_batch = 64, .max_queue = 64});
    constexpr int kClients = 8, kEach = 4;
    std::atomic<int> ok{0};
    std::vector<std::thread> clients;
    for (int t = 0; t < kClients; ++t) {
        clients.emplace_back([&, t] {
            auto c = srv.client();
            for (int i = 0; i < kEach; ++i) {
                const bool stream = (t + i) % 2 == 0;
                const std::string text = "client " + std::to_string(t) + " request " + std::to_string(i);
                if (stream) {
                    Streamed s = post_stream(c, "/v1/chat/completions", chat_request(text, 6, true));
                    std::vector<json> chunks = s.status == 200 ? sse_json(s.body) : std::vector<json>{};
                    if (!chunks.empty() && chunks.back()["usage"]["completion_tokens"] == 6) ++ok;
                } else {
                    auto r = post(c, "/v1/chat/completions", chat_request(text, 6));
                    if (r && r->status == 200 && json::parse(r->body)["usage"]["completion_tokens"] == 6) ++ok;
                }
            }
        });
    }
    for (auto& t : clients) t.join();
    EXPECT_EQ(ok.load(), kClients * kEach);
    auto c = srv.client();
    auto h = c.Get("/health");
    ASSERT_TRUE(h);
    EXPECT_EQ(json::parse(h->body)["status"], "ready");
    EXPECT_EQ(json::parse(h->body)["slots_busy"], 0);
    auto m = c.Get("/metrics");
    EXPECT_NE(m->body.find("strata_requests_finished_total{outcome=\"length\"} " + std::to_string(kClients * kEach)), std::string::npos)
        << m->body;
}

// A tool call round trip: the model's output is forced (scheduler test hook) to a Hermes tool
// call; the client gets it as tool_calls with finish_reason "tool_calls", streamed and not, and
// can send the tool's result back in the next request.
TEST(ServerE2E, ToolCallRoundTrip) {
    static Engine* model = [] {
        // The template mentions <tool_call>, so the server recognises the Hermes syntax.
        const std::string tmpl = std::string(test::kTinyChatTemplate) + "{# calls are written as <tool_call>{...}</tool_call> #}";
        auto lm = Engine::open({.model_path = test::tiny_model_path(), .chat_template = tmpl});
        STRATA_CHECK(lm.is_ok(), lm.status().message().c_str());
        return std::move(*lm).release();
    }();
    const std::vector<int32_t> forced = model->tokenizer->encode(
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", false, false);
    const int32_t eos = model->tokenizer->eos_id();
    ASSERT_GE(eos, 0);
    SchedulerOptions so{.n_slots = 1, .n_ctx = 512, .n_batch = 64, .max_queue = 4};
    so.forced_next_token = [&](const std::vector<int32_t>&, int64_t n) {
        return n < static_cast<int64_t>(forced.size()) ? forced[static_cast<size_t>(n)] : eos;
    };
    TestServer srv({}, so, model);
    auto c = srv.client();
    json request = {{"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}},
                    {"tools", {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}}}};
    auto r = post(c, "/v1/chat/completions", request);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = json::parse(r->body);
    const json& msg = j["choices"][0]["message"];
    EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
    EXPECT_TRUE(msg["content"].is_null());
    ASSERT_EQ(msg["tool_calls"].size(), 1u);
    EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
    EXPECT_EQ(json::parse(msg["tool_calls"][0]["function"]["arguments"].get<std::string>())["city"], "Paris");

    json streamed_request = request;
    streamed_request["stream"] = true;
    Streamed s = post_stream(c, "/v1/chat/completions", streamed_request);
    ASSERT_EQ(s.status, 200);
    std::string finish, name;
    for (const auto& ch : sse_json(s.body)) {
        const json& choice = ch["choices"][0];
        if (choice["delta"].contains("tool_calls")) name = choice["delta"]["tool_calls"][0]["function"]["name"];
        if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
    }
    EXPECT_EQ(name, "get_weather");
    EXPECT_EQ(finish, "tool_calls");

    // The client runs the tool and sends its result back.
    json follow_up = request;
    follow_up["messages"].push_back(msg);
    follow_up["messages"].push_back({{"role", "tool"}, {"tool_call_id", msg["tool_calls"][0]["id"]}, {"content", "18 C, sunny"}});
    auto r2 = post(c, "/v1/chat/completions", follow_up);
    ASSERT_TRUE(r2);
    EXPECT_EQ(r2->status, 200) << r2->body;
}

TEST(ServerE2E, ASecondServerCannotTakeAPortInUse) {
    TestServer first({}, {}, /*model=*/nullptr);
    ServerOptions o;
    o.port = first.port();
    ServerContext ctx(o);
    HttpServer second(ctx);
    const Status s = second.bind();
    ASSERT_FALSE(s.is_ok()) << "a second server listens on port " << first.port();
    EXPECT_NE(s.message().find("in use"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace strata::server
