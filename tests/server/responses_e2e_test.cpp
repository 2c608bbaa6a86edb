// End to end: the OpenAI Responses API (POST /v1/responses, GET/DELETE /v1/responses/{id},
// /v1/responses/input_tokens) on the real HTTP server with the tiny model, whose output is forced
// (the scheduler's test hook) so that every answer is exact: the response object, incomplete
// replies, the stream's numbered events adding up to the whole response, reasoning and
// function_call items from the shared output parser, previous_response_id continuing a stored
// conversation from the KV cache, the store's bound, errors and authentication in OpenAI's shape.
// Every loop and wait is bounded.
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

// A server whose every reply is `script` then the end token (or up to max_output_tokens, if fewer).
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

json request(const json& input) { return {{"model", "gpt-5-codex"}, {"input", input}, {"temperature", 0}}; }

// The byte-level vocabulary: a prompt's tokens are its bytes.
int64_t tokens_of(const std::string& rendered) { return static_cast<int64_t>(rendered.size()); }

const json kWeatherTool = {{"type", "function"},
                           {"name", "get_weather"},
                           {"description", "The weather in a city"},
                           {"parameters", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}}};

json ok_json(const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return nullptr;
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body, nullptr, false);
}

// The events of a complete stream: each named as its data's type, numbered 0, 1, 2, ...
std::vector<json> events_of(const Streamed& s) {
    auto events = parse_sse_events(s.body);
    EXPECT_TRUE(events) << "truncated stream: " << s.body;
    std::vector<json> out;
    if (!events) return out;
    for (const auto& e : *events) {
        json data = json::parse(e.data);
        EXPECT_EQ(data["type"], e.name) << "the event line and the data's type differ: " << e.data;
        EXPECT_EQ(data["sequence_number"], out.size()) << e.data;
        out.push_back(std::move(data));
    }
    return out;
}

// The event types with repeated deltas folded into one.
std::string order_of(const std::vector<json>& events) {
    std::string out, last;
    for (const auto& e : events) {
        const std::string type = e["type"];
        if (type == last && type.size() > 6 && type.compare(type.size() - 6, 6, ".delta") == 0) continue;
        if (!out.empty()) out += ' ';
        out += type;
        last = type;
    }
    return out;
}

void expect_openai_error(const httplib::Result& r, int status, const std::string& param, const std::string& says) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j["error"].is_object()) << r->body;
    EXPECT_TRUE(j["error"]["type"].is_string()) << r->body;
    EXPECT_EQ(j["error"]["param"], param.empty() ? json(nullptr) : json(param)) << r->body;
    ASSERT_TRUE(j["error"]["message"].is_string()) << r->body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find(says), std::string::npos) << r->body;
}

TEST(ResponsesE2E, AWholeResponseInOpenAIsShape) {
    ScriptedServer srv("In the beginning.");
    auto c = srv.client();
    json body = request("Genesis 1:1?");
    body["instructions"] = "Answer with the verse.";
    body["metadata"] = {{"ticket", "7"}};
    auto r = post(c, "/v1/responses", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    json resp = ok_json(r);
    EXPECT_EQ(resp["id"].get<std::string>().rfind("resp_", 0), 0u);
    EXPECT_EQ(resp["object"], "response");
    EXPECT_EQ(resp["status"], "completed");
    EXPECT_TRUE(resp["created_at"].is_number_integer());
    EXPECT_EQ(resp["model"], "gpt-5-codex");  // the name asked for, whatever the server serves
    EXPECT_TRUE(resp["error"].is_null());
    EXPECT_TRUE(resp["incomplete_details"].is_null());
    ASSERT_EQ(resp["output"].size(), 1u) << resp.dump(2);
    const json& msg = resp["output"][0];
    EXPECT_EQ(msg["type"], "message");
    EXPECT_EQ(msg["id"].get<std::string>().rfind("msg_", 0), 0u);
    EXPECT_EQ(msg["role"], "assistant");
    EXPECT_EQ(msg["status"], "completed");
    EXPECT_EQ(msg["content"], json::parse(R"([{"type":"output_text","text":"In the beginning.","annotations":[],"logprobs":[]}])"));
    // The request's settings, echoed.
    EXPECT_EQ(resp["instructions"], "Answer with the verse.");
    EXPECT_EQ(resp["metadata"], body["metadata"]);
    EXPECT_EQ(resp["temperature"], 0.0);
    EXPECT_TRUE(resp["max_output_tokens"].is_null());
    EXPECT_TRUE(resp["previous_response_id"].is_null());
    EXPECT_EQ(resp["store"], true);
    EXPECT_EQ(resp["tools"], json::array());
    EXPECT_EQ(resp["tool_choice"], "auto");
    EXPECT_EQ(resp["parallel_tool_calls"], true);
    EXPECT_EQ(resp["text"], json::parse(R"({"format":{"type":"text"}})"));
    const int64_t prompt = tokens_of("<system>Answer with the verse.\n<user>Genesis 1:1?\n<assistant>");
    EXPECT_EQ(resp["usage"], json({{"input_tokens", prompt},
                                   {"input_tokens_details", {{"cached_tokens", 0}}},
                                   {"output_tokens", srv.script_tokens() + 1},  // the end token counts
                                   {"output_tokens_details", {{"reasoning_tokens", 0}}},
                                   {"total_tokens", prompt + srv.script_tokens() + 1}}));

    // Stored (store defaults to true): GET gives the same object back.
    json kept = ok_json(c.Get(("/v1/responses/" + resp["id"].get<std::string>()).c_str()));
    EXPECT_EQ(kept, resp);
}

TEST(ResponsesE2E, MaxOutputTokensMakesAnIncompleteResponse) {
    ScriptedServer srv("Amen. And so on");
    auto c = srv.client();
    json body = request("x");
    body["max_output_tokens"] = 3;
    json resp = ok_json(post(c, "/v1/responses", body));
    EXPECT_EQ(resp["status"], "incomplete");
    EXPECT_EQ(resp["incomplete_details"], json::parse(R"({"reason":"max_output_tokens"})"));
    EXPECT_EQ(resp["max_output_tokens"], 3);
    EXPECT_EQ(resp["usage"]["output_tokens"], 3);
    EXPECT_EQ(resp["output"][0]["status"], "incomplete");
    EXPECT_EQ(resp["output"][0]["content"][0]["text"], "Ame");
}

TEST(ResponsesE2E, TheStreamsNumberedEventsAddUpToTheWholeResponse) {
    ScriptedServer srv("Let there be light: and there was light.");
    auto c = srv.client();
    json body = request("Genesis 1:3?");
    json whole = ok_json(post(c, "/v1/responses", body));

    body["stream"] = true;
    Streamed s = post_stream(c, "/v1/responses", body);
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.content_type, "text/event-stream");
    const auto events = events_of(s);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(order_of(events),
              "response.created response.in_progress response.output_item.added response.content_part.added "
              "response.output_text.delta response.output_text.done response.content_part.done response.output_item.done "
              "response.completed");
    const json& created = events.front()["response"];
    EXPECT_EQ(created["status"], "in_progress");
    EXPECT_EQ(created["output"], json::array());
    EXPECT_TRUE(created["usage"].is_null());
    std::string text;
    size_t deltas = 0;
    for (const auto& e : events) {
        if (e["type"] != "response.output_text.delta") continue;
        EXPECT_EQ(e["output_index"], 0);
        EXPECT_EQ(e["content_index"], 0);
        EXPECT_EQ(e["item_id"], events[2]["item"]["id"]);
        text += e["delta"].get<std::string>();
        ++deltas;
    }
    EXPECT_GT(deltas, 1u);  // streamed, not sent at the end
    EXPECT_EQ(text, whole["output"][0]["content"][0]["text"].get<std::string>());
    const json& done = events.back()["response"];
    EXPECT_EQ(done["id"], created["id"]);
    EXPECT_EQ(done["status"], "completed");
    EXPECT_EQ(done["output"][0]["content"], whole["output"][0]["content"]);
    EXPECT_EQ(done["usage"]["output_tokens"], whole["usage"]["output_tokens"]);
    // A streamed response is stored as it ended.
    EXPECT_EQ(ok_json(c.Get(("/v1/responses/" + done["id"].get<std::string>()).c_str())), done);
}

TEST(ResponsesE2E, ACallIsAFunctionCallItemAndItsOutputContinuesTheConversation) {
    ScriptedServer srv("<think>Ask the tool.</think><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
    auto c = srv.client();
    json body = request("Weather in Paris?");
    body["tools"] = json::array({kWeatherTool});
    json resp = ok_json(post(c, "/v1/responses", body));
    EXPECT_EQ(resp["status"], "completed");
    EXPECT_EQ(resp["tools"][0]["name"], "get_weather");
    ASSERT_EQ(resp["output"].size(), 2u) << resp.dump(2);
    const json& reasoning = resp["output"][0];
    EXPECT_EQ(reasoning["type"], "reasoning");
    EXPECT_EQ(reasoning["id"].get<std::string>().rfind("rs_", 0), 0u);
    EXPECT_EQ(reasoning["content"], json::parse(R"([{"type":"reasoning_text","text":"Ask the tool."}])"));
    const json& call = resp["output"][1];
    EXPECT_EQ(call["type"], "function_call");
    EXPECT_EQ(call["id"].get<std::string>().rfind("fc_", 0), 0u);
    EXPECT_EQ(call["call_id"].get<std::string>().rfind("call_", 0), 0u);
    EXPECT_EQ(call["name"], "get_weather");
    EXPECT_EQ(json::parse(call["arguments"].get<std::string>()), json::parse(R"({"city":"Paris"})"));
    EXPECT_EQ(call["status"], "completed");
    EXPECT_EQ(resp["usage"]["output_tokens_details"]["reasoning_tokens"], tokens_of("Ask the tool."));

    body["stream"] = true;
    const auto events = events_of(post_stream(c, "/v1/responses", body));
    EXPECT_EQ(order_of(events),
              "response.created response.in_progress "
              "response.output_item.added response.content_part.added response.reasoning_text.delta response.reasoning_text.done "
              "response.content_part.done response.output_item.done "
              "response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done "
              "response.output_item.done response.completed");
    std::string arguments;
    for (const auto& e : events) {
        if (e["type"] == "response.function_call_arguments.delta") arguments += e["delta"].get<std::string>();
    }
    EXPECT_EQ(json::parse(arguments), json::parse(R"({"city":"Paris"})"));

    // The client runs the tool and sends only its output, naming the response with the call.
    json follow_up = request(json::array({{{"type", "function_call_output"}, {"call_id", call["call_id"]}, {"output", "18 C, sunny"}}}));
    follow_up["previous_response_id"] = resp["id"];
    follow_up["tools"] = json::array({kWeatherTool});
    json next = ok_json(post(c, "/v1/responses", follow_up));
    EXPECT_EQ(next["previous_response_id"], resp["id"]);
    // The call and its result were rendered after the first turn: the template writes a tool
    // message as "<tool>content".
    const int64_t first = tokens_of("<user>Weather in Paris?\n<tools>1\n<assistant>");
    const int64_t second = tokens_of("<user>Weather in Paris?\n<assistant>\n<tool>18 C, sunny\n<tools>1\n<assistant>");
    EXPECT_EQ(resp["usage"]["input_tokens"], first);
    EXPECT_EQ(next["usage"]["input_tokens"], second);
}

TEST(ResponsesE2E, PreviousResponseIdContinuesTheConversationFromTheKvCache) {
    ScriptedServer srv("In the beginning.");
    auto c = srv.client();
    json first_body = request("Genesis 1:1?");
    first_body["instructions"] = "Quote.";
    json first = ok_json(post(c, "/v1/responses", first_body));
    json second_body = request("And 1:2?");
    second_body["previous_response_id"] = first["id"];
    json second = ok_json(post(c, "/v1/responses", second_body));
    // Instructions are not carried over; the earlier turn and its reply are.
    const std::string before = "<user>Genesis 1:1?\n<assistant>In the beginning.";
    EXPECT_EQ(second["usage"]["input_tokens"], tokens_of(before + "\n<user>And 1:2?\n<assistant>"));
    EXPECT_TRUE(second["instructions"].is_null());
    EXPECT_EQ(second["previous_response_id"], first["id"]);

    // A third turn extends the second's prompt and reply: the KV cache still holds them.
    json third_body = request("And 1:3?");
    third_body["previous_response_id"] = second["id"];
    json third = ok_json(post(c, "/v1/responses", third_body));
    const std::string second_turn = before + "\n<user>And 1:2?\n<assistant>In the beginning.";
    EXPECT_EQ(third["usage"]["input_tokens"], tokens_of(second_turn + "\n<user>And 1:3?\n<assistant>"));
    EXPECT_EQ(third["usage"]["input_tokens_details"]["cached_tokens"], tokens_of(second_turn));

    // store: false keeps nothing to continue from.
    json unstored_body = request("x");
    unstored_body["store"] = false;
    json unstored = ok_json(post(c, "/v1/responses", unstored_body));
    EXPECT_EQ(unstored["store"], false);
    const std::string unstored_id = unstored["id"];
    expect_openai_error(c.Get(("/v1/responses/" + unstored_id).c_str()), 404, "", "no response with id '" + unstored_id + "'");
    json after_unstored = request("y");
    after_unstored["previous_response_id"] = unstored_id;
    expect_openai_error(post(c, "/v1/responses", after_unstored), 404, "previous_response_id", "never stored");
}

TEST(ResponsesE2E, GetDeleteAndTheStoresBound) {
    ServerOptions o;
    o.stored_responses = 2;
    ScriptedServer srv("ok", o);
    auto c = srv.client();
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(ok_json(post(c, "/v1/responses", request("n")))["id"]);
    // The oldest of three went when the third came.
    expect_openai_error(c.Get(("/v1/responses/" + ids[0]).c_str()), 404, "", "evicted");
    EXPECT_EQ(ok_json(c.Get(("/v1/responses/" + ids[1]).c_str()))["id"], ids[1]);
    json deleted = ok_json(c.Delete(("/v1/responses/" + ids[2]).c_str()));
    EXPECT_EQ(deleted, json({{"id", ids[2]}, {"object", "response"}, {"deleted", true}}));
    expect_openai_error(c.Get(("/v1/responses/" + ids[2]).c_str()), 404, "", "deleted");
    expect_openai_error(c.Delete(("/v1/responses/" + ids[2]).c_str()), 404, "", ids[2]);
}

TEST(ResponsesE2E, InputTokensCountsThePromptAsTheResponseDoes) {
    ScriptedServer srv("ok");
    auto c = srv.client();
    json body = request(json::array({{{"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "How many?"}}}}}}));
    body["instructions"] = "Count.";
    body["tools"] = json::array({kWeatherTool});
    json counted = ok_json(post(c, "/v1/responses/input_tokens", body));
    EXPECT_EQ(counted, json({{"object", "response.input_tokens"}, {"input_tokens", tokens_of("<system>Count.\n<user>How many?\n<tools>1\n<assistant>")}}));
    EXPECT_EQ(ok_json(post(c, "/v1/responses", body))["usage"]["input_tokens"], counted["input_tokens"]);
}

TEST(ResponsesE2E, BadRequestsGetOpenAiErrorsAndTheServerStaysUp) {
    ScriptedServer srv("fine");
    auto c = srv.client();
    auto bad_json = c.Post("/v1/responses", "{\"model\": ", "application/json");
    expect_openai_error(bad_json, 400, "", "not valid JSON");
    EXPECT_EQ(json::parse(bad_json->body)["error"]["code"], "invalid_json");
    expect_openai_error(post(c, "/v1/responses", {{"model", "m"}}), 400, "input", "input: required");
    expect_openai_error(post(c, "/v1/responses", request(json::array({{{"role", "user"}, {"content", 5}}}))), 400, "input[0].content",
                        "input[0].content: expected a string or a list of content parts, got 5");
    json forced = request("x");
    forced["tool_choice"] = "required";
    expect_openai_error(post(c, "/v1/responses", forced), 400, "tool_choice", "offers no function tools");
    json too_many = request("x");
    too_many["max_output_tokens"] = 100000;
    expect_openai_error(post(c, "/v1/responses", too_many), 400, "max_output_tokens", "max_output_tokens is 100000");
    expect_openai_error(post(c, "/v1/responses", request(std::string(600, 'x'))), 400, "input", "the input is 618 tokens");
    json unknown = request("x");
    unknown["previous_response_id"] = "resp_nothing";
    expect_openai_error(post(c, "/v1/responses", unknown), 404, "previous_response_id", "no response with id 'resp_nothing'");
    expect_openai_error(c.Get("/v1/responses/a/b"), 404, "", "no route GET /v1/responses/a/b");
    // An id's bytes are not echoed as they came (a path need not be UTF-8).
    expect_openai_error(c.Get("/v1/responses/%FF%FEx"), 404, "", "no response with id '??x'");
    auto ok = post(c, "/v1/responses", request("still there?"));
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST(ResponsesE2E, TheKeyIsRequiredAndErrorsKeepOpenAisShape) {
    ServerOptions o;
    o.api_key = "s3cret-key";
    ScriptedServer srv("yes", o);
    auto c = srv.client();
    auto refused = post(c, "/v1/responses", request("x"));
    expect_openai_error(refused, 401, "", "invalid or missing API key");
    EXPECT_EQ(json::parse(refused->body)["error"]["code"], "invalid_api_key");
    expect_openai_error(c.Get("/v1/responses/resp_x"), 401, "", "API key");
    EXPECT_EQ(post(c, "/v1/responses", request("x"), {{"Authorization", "Bearer s3cret-key"}})->status, 200);
}

TEST(ResponsesE2E, LoadingIsA503) {
    TestServer srv({}, {}, /*model=*/nullptr);
    auto c = srv.client();
    expect_openai_error(post(c, "/v1/responses", request("x")), 503, "", "still loading");
}

TEST(ResponsesE2E, ATimeoutMidStreamIsAFailedResponse) {
    Engine& model = hermes_model();
    const int32_t a = model.tokenizer->encode("a", false, false).at(0);
    SchedulerOptions so{.n_slots = 1, .n_ctx = 32768, .n_batch = 64, .max_queue = 0};
    so.forced_next_token = [a](const std::vector<int32_t>&, int64_t) { return a; };  // never ends on its own
    ServerOptions o;
    o.timeout = std::chrono::seconds(1);
    TestServer srv(o, so, &model);
    auto c = srv.client();
    json body = request("hold the slot");
    body["max_output_tokens"] = 32000;  // far more than 1 s of tokens
    body["stream"] = true;
    Streamed s = post_stream(c, "/v1/responses", body);
    ASSERT_EQ(s.status, 200);
    const auto events = events_of(s);
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.front()["type"], "response.created");
    const json& failed = events.back();
    EXPECT_EQ(failed["type"], "response.failed");
    EXPECT_EQ(failed["response"]["status"], "failed");
    EXPECT_EQ(failed["response"]["error"]["code"], "server_error");
    EXPECT_NE(failed["response"]["error"]["message"].get<std::string>().find("timed out"), std::string::npos) << failed;
}

}  // namespace
}  // namespace strata::server
