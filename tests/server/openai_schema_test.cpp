// Request parsing and validation of the OpenAI endpoints: every refusal with its HTTP status,
// code and a message that names the field, and the shapes of the responses clients parse.
#include <gtest/gtest.h>

#include <random>

#include "server/openai_schema.h"

namespace strata::server {
namespace {

const std::string kModel = "tiny";

ApiResult<GenerationRequest> chat(const std::string& body) { return parse_chat_request(body, SamplingParams{}, {kModel, true}); }
ApiResult<GenerationRequest> completion(const std::string& body) { return parse_completion_request(body, SamplingParams{}, {kModel, true}); }

// A chat body with one user message plus the given extra fields (JSON text without braces).
std::string chat_body(const std::string& extra = "") {
    return R"({"model":"tiny","messages":[{"role":"user","content":"hi"}])" + (extra.empty() ? "" : "," + extra) + "}";
}

// Asserts that `body` is refused with `status`, naming `param`, and that the message contains `says`.
void expect_chat_error(const std::string& body, int status, const std::string& param, const std::string& says,
                       const std::string& code = "") {
    auto r = chat(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error.http_status, status) << body;
    EXPECT_EQ(r.error.param, param) << body;
    EXPECT_NE(r.error.message.find(says), std::string::npos) << "message: " << r.error.message;
    if (!code.empty()) {
        EXPECT_EQ(r.error.code, code) << body;
    }
}

TEST(OpenAiSchema, ValidChatTakesEveryField) {
    auto r = chat(chat_body(R"("temperature":0.5,"top_p":0.9,"top_k":20,"min_p":0.1,"max_tokens":33,"stop":["a","b"],)"
                            R"("seed":7,"presence_penalty":0.5,"frequency_penalty":-0.5,"stream":true,)"
                            R"("stream_options":{"include_usage":true},"n":1,"logprobs":false,"user":"u","ignore_eos":true)"));
    ASSERT_TRUE(r) << r.error.message;
    const GenerationRequest& g = *r.value;
    EXPECT_FLOAT_EQ(g.sampling.temperature, 0.5f);
    EXPECT_FLOAT_EQ(g.sampling.top_p, 0.9f);
    EXPECT_EQ(g.sampling.top_k, 20);
    EXPECT_FLOAT_EQ(g.sampling.min_p, 0.1f);
    EXPECT_FLOAT_EQ(g.sampling.presence_penalty, 0.5f);
    EXPECT_FLOAT_EQ(g.sampling.frequency_penalty, -0.5f);
    EXPECT_EQ(g.sampling.seed, 7u);
    EXPECT_TRUE(g.seed_given);
    EXPECT_EQ(g.max_tokens, 33);
    EXPECT_EQ(g.stop, (std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(g.stream);
    EXPECT_TRUE(g.include_usage);
    EXPECT_TRUE(g.ignore_eos);
}

TEST(OpenAiSchema, DefaultsApplyToFieldsLeftOutOrNull) {
    SamplingParams defaults;
    defaults.temperature = 0.3f;
    auto r = parse_chat_request(R"({"messages":[{"role":"user","content":"hi"}],"temperature":null,"stop":null,"max_tokens":null})",
                                defaults, {kModel, true});
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_FLOAT_EQ(r.value->sampling.temperature, 0.3f);
    EXPECT_FALSE(r.value->max_tokens.has_value());
    EXPECT_TRUE(r.value->stop.empty());
    EXPECT_FALSE(r.value->stream);
}

TEST(OpenAiSchema, MessagesAreNormalizedForTheTemplate) {
    auto r = chat(R"({"messages":[{"role":"developer","content":"be brief"},)"
                  R"({"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]},)"
                  R"({"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},)"
                  R"({"role":"tool","tool_call_id":"c1","content":"42"}],)"
                  R"("tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"tool_choice":"auto"})");
    ASSERT_TRUE(r) << r.error.message;
    const auto& m = r.value->messages;
    EXPECT_EQ(m[0]["role"], "system");
    EXPECT_EQ(m[1]["content"], "one\ntwo");
    EXPECT_EQ(m[2]["content"], "");
    EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"]["x"], 1);  // parsed for the template
    EXPECT_EQ(m[3]["tool_call_id"], "c1");
    ASSERT_TRUE(r.value->tools.is_array());
    EXPECT_EQ(r.value->tools.size(), 1u);
}

TEST(OpenAiSchema, ToolChoiceNoneDropsTheTools) {
    auto r = chat(chat_body(R"("tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none")"));
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_TRUE(r.value->tools.is_null());
}

TEST(OpenAiSchema, MalformedBodiesAreRefused) {
    expect_chat_error(R"({"messages": [)", 400, "", "not valid JSON", "invalid_json");
    expect_chat_error("", 400, "", "not valid JSON", "invalid_json");
    expect_chat_error(R"([1,2])", 400, "", "expected a JSON object", "invalid_json");
    expect_chat_error(std::string(1000, '[') + std::string(1000, ']'), 400, "", "nests deeper", "invalid_json");
}

TEST(OpenAiSchema, MessageErrorsNameTheMessage) {
    expect_chat_error(R"({"model":"tiny"})", 400, "messages", "required", "missing_required_parameter");
    expect_chat_error(R"({"messages":[]})", 400, "messages", "non-empty list");
    expect_chat_error(R"({"messages":"hi"})", 400, "messages", "non-empty list");
    expect_chat_error(R"({"messages":[5]})", 400, "messages[0]", "expected an object");
    expect_chat_error(R"({"messages":[{"role":"king","content":"hi"}]})", 400, "messages[0].role", "got \"king\"");
    expect_chat_error(R"({"messages":[{"content":"hi"}]})", 400, "messages[0].role", "got nothing");
    expect_chat_error(R"({"messages":[{"role":"user"}]})", 400, "messages[0].content", "required for role user");
    expect_chat_error(R"({"messages":[{"role":"user","content":5}]})", 400, "messages[0].content", "expected a string or a list");
    expect_chat_error(R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})", 400,
                      "messages[0].content", "'image_url' are not supported", "unsupported_parameter");
    expect_chat_error(R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})", 400, "messages[0].content", "string \"text\"");
}

TEST(OpenAiSchema, WrongTypesAndRangesNameTheField) {
    expect_chat_error(chat_body(R"("temperature":"hot")"), 400, "temperature", "expected a number from 0 to 2, got \"hot\"");
    expect_chat_error(chat_body(R"("temperature":2.5)"), 400, "temperature", "got 2.5");
    expect_chat_error(chat_body(R"("top_p":0)"), 400, "top_p", "above 0");
    expect_chat_error(chat_body(R"("top_p":1.5)"), 400, "top_p", "from 0 to 1");
    expect_chat_error(chat_body(R"("min_p":-1)"), 400, "min_p", "from 0 to 1");
    expect_chat_error(chat_body(R"("top_k":-1)"), 400, "top_k", "expected an integer");
    expect_chat_error(chat_body(R"("top_k":1.5)"), 400, "top_k", "expected an integer");
    expect_chat_error(chat_body(R"("max_tokens":0)"), 400, "max_tokens", "from 1");
    expect_chat_error(chat_body(R"("max_tokens":"10")"), 400, "max_tokens", "expected an integer");
    expect_chat_error(chat_body(R"("max_completion_tokens":-5)"), 400, "max_completion_tokens", "from 1");
    expect_chat_error(chat_body(R"("max_tokens":5,"max_completion_tokens":6)"), 400, "max_tokens", "disagree");
    expect_chat_error(chat_body(R"("presence_penalty":3)"), 400, "presence_penalty", "from -2 to 2");
    expect_chat_error(chat_body(R"("frequency_penalty":"x")"), 400, "frequency_penalty", "from -2 to 2");
    expect_chat_error(chat_body(R"("seed":"x")"), 400, "seed", "expected an integer");
    expect_chat_error(chat_body(R"("stop":5)"), 400, "stop", "a string or a list of strings, got 5");
    expect_chat_error(chat_body(R"("stop":["a",1])"), 400, "stop", "got an element 1");
    expect_chat_error(chat_body(R"("stop":[""])"), 400, "stop", "must not be empty");
    expect_chat_error(chat_body(R"("stop":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"])"), 400,
                      "stop", "at most 16");
    expect_chat_error(chat_body(R"("stream":"yes")"), 400, "stream", "true or false");
    expect_chat_error(chat_body(R"("stream_options":{"include_usage":true})"), 400, "stream_options", "only allowed when stream is true");
    expect_chat_error(chat_body(R"("stream":true,"stream_options":{"include_usage":1})"), 400, "stream_options.include_usage", "true or false");
    expect_chat_error(chat_body(R"("tools":{"a":1})"), 400, "tools", "expected a list");
    expect_chat_error(chat_body(R"("tools":[{"type":"function"}])"), 400, "tools[0]", "\"name\"");
}

TEST(OpenAiSchema, AnyModelNameIsServedUnlessStrict) {
    const std::string body = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";
    auto any = parse_chat_request(body, SamplingParams{}, {kModel, false});
    ASSERT_TRUE(any);
    EXPECT_EQ(any.value->model, "gpt-4o");  // echoed back as asked
    EXPECT_TRUE(parse_completion_request(R"({"model":"other","prompt":"hi"})", SamplingParams{}, {kModel, false}));
}

TEST(OpenAiSchema, UnknownModelIs404WhenStrict) {
    auto r = parse_chat_request(R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})", SamplingParams{}, {kModel, true});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error.http_status, 404);
    EXPECT_EQ(r.error.code, "model_not_found");
    EXPECT_NE(r.error.message.find("'gpt-4o' does not exist"), std::string::npos);
    EXPECT_NE(r.error.message.find("'tiny'"), std::string::npos);
    expect_chat_error(R"({"model":5,"messages":[{"role":"user","content":"hi"}]})", 400, "model", "expected a string");
}

TEST(OpenAiSchema, ParametersThatChangeTheAnswerAreRefusedNotIgnored) {
    expect_chat_error(chat_body(R"("n":2)"), 400, "n", "only 1 choice", "unsupported_parameter");
    expect_chat_error(chat_body(R"("logprobs":true)"), 400, "logprobs", "not supported", "unsupported_parameter");
    expect_chat_error(chat_body(R"("top_logprobs":3)"), 400, "top_logprobs", "not supported", "unsupported_parameter");
    expect_chat_error(chat_body(R"("logit_bias":{"50256":-100})"), 400, "logit_bias", "not supported", "unsupported_parameter");
    expect_chat_error(chat_body(R"("response_format":{"type":"xml"})"), 400, "response_format", "expected {\"type\": \"text\" | \"json_object\" | \"json_schema\"}");
    expect_chat_error(chat_body(R"("response_format":{"type":"json_schema","json_schema":{"name":"x"}})"), 400, "response_format", "expected {\"name\", \"schema\"");
    expect_chat_error(chat_body(R"("grammar":5)"), 400, "grammar", "expected GBNF text");
    expect_chat_error(chat_body(R"("response_format":{"type":"json_object"},"grammar":"root ::= \"a\"")"), 400, "grammar", "send one of them");
    expect_chat_error(chat_body(R"("tool_choice":"required")"), 400, "tool_choice", "needs tools");
    expect_chat_error(chat_body(R"("tool_choice":{"type":"function","function":{"name":"f"}})"), 400, "tool_choice", "needs tools");
    expect_chat_error(chat_body(R"("tool_choice":"sometimes")"), 400, "tool_choice", "expected \"auto\", \"none\", \"required\"");
    // Constrained output: parsed into the request's constraint.
    auto json_object = chat(chat_body(R"("response_format":{"type":"json_object"})"));
    ASSERT_TRUE(json_object) << json_object.error.message;
    EXPECT_EQ(json_object.value->constraint.kind, OutputConstraint::Kind::JsonObject);
    auto schema = chat(chat_body(R"("response_format":{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","properties":{"b":{},"a":{}}},"strict":true}})"));
    ASSERT_TRUE(schema) << schema.error.message;
    EXPECT_EQ(schema.value->constraint.kind, OutputConstraint::Kind::JsonSchema);
    EXPECT_TRUE(schema.value->constraint.strict);
    EXPECT_EQ(schema.value->constraint.schema["properties"].begin().key(), "b");  // the client's order is kept
    auto forced = chat(chat_body(R"("tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}})"));
    ASSERT_TRUE(forced) << forced.error.message;
    EXPECT_EQ(forced.value->constraint.tool_name, "f");
    auto gbnf = chat(chat_body(R"("grammar":"root ::= \"a\"")"));
    ASSERT_TRUE(gbnf) << gbnf.error.message;
    EXPECT_EQ(gbnf.value->constraint.grammar, "root ::= \"a\"");
    expect_chat_error(chat_body(R"("functions":[{"name":"f"}])"), 400, "functions", "not supported");
    expect_chat_error(chat_body(R"("modalities":["text","audio"])"), 400, "modalities", "only [\"text\"]");
    // Their neutral values are accepted.
    EXPECT_TRUE(chat(chat_body(R"("n":1,"logprobs":false,"logit_bias":{},"response_format":{"type":"text"},"modalities":["text"])")));
}

TEST(OpenAiSchema, CompletionPrompts) {
    auto text = completion(R"({"prompt":"Once upon"})");
    ASSERT_TRUE(text) << text.error.message;
    EXPECT_EQ(text.value->prompt_text, "Once upon");
    auto one = completion(R"({"prompt":["Once upon"]})");
    ASSERT_TRUE(one);
    EXPECT_EQ(one.value->prompt_text, "Once upon");
    auto ids = completion(R"({"prompt":[1,2,3]})");
    ASSERT_TRUE(ids);
    EXPECT_TRUE(ids.value->prompt_is_tokens);
    EXPECT_EQ(ids.value->prompt_tokens, (std::vector<int32_t>{1, 2, 3}));

    auto expect_error = [](const std::string& body, const std::string& param, const std::string& says) {
        auto r = completion(body);
        ASSERT_FALSE(r) << body;
        EXPECT_EQ(r.error.http_status, 400);
        EXPECT_EQ(r.error.param, param);
        EXPECT_NE(r.error.message.find(says), std::string::npos) << r.error.message;
    };
    expect_error(R"({})", "prompt", "required");
    expect_error(R"({"prompt":""})", "prompt", "must not be empty");
    expect_error(R"({"prompt":5})", "prompt", "expected a non-empty string");
    expect_error(R"({"prompt":["a","b"]})", "prompt", "batches of 2 prompts");
    expect_error(R"({"prompt":[1,-2]})", "prompt", "non-negative integers");
    expect_error(R"({"prompt":"x","echo":true})", "echo", "not supported");
    expect_error(R"({"prompt":"x","best_of":2})", "best_of", "only 1");
    expect_error(R"({"prompt":"x","suffix":"end"})", "suffix", "not supported");
    expect_error(R"({"prompt":"x","logprobs":2})", "logprobs", "not supported");
}

TEST(OpenAiSchema, ContextBudgetSaysByHowMuch) {
    int64_t max_tokens = 0;
    auto too_long = check_context_budget(5000, std::nullopt, 4096, max_tokens);
    ASSERT_TRUE(too_long);
    EXPECT_EQ(too_long->http_status, 400);
    EXPECT_EQ(too_long->code, "context_length_exceeded");
    EXPECT_NE(too_long->message.find("the prompt is 5000 tokens, 905 more than"), std::string::npos) << too_long->message;

    auto too_many = check_context_budget(1000, 4000, 4096, max_tokens);
    ASSERT_TRUE(too_many);
    EXPECT_EQ(too_many->param, "max_tokens");
    EXPECT_NE(too_many->message.find("room for only 3096"), std::string::npos) << too_many->message;
    EXPECT_NE(too_many->message.find("904 too many"), std::string::npos) << too_many->message;

    EXPECT_FALSE(check_context_budget(1000, 3096, 4096, max_tokens));
    EXPECT_EQ(max_tokens, 3096);
    EXPECT_FALSE(check_context_budget(1000, std::nullopt, 4096, max_tokens));
    EXPECT_EQ(max_tokens, 3096);  // no limit asked: the rest of the context
}

TEST(OpenAiSchema, ErrorShapeIsOpenAis) {
    nlohmann::json j = ApiError::invalid("top_p", "top_p: bad").to_json();
    EXPECT_EQ(j["error"]["message"], "top_p: bad");
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_EQ(j["error"]["param"], "top_p");
    EXPECT_EQ(j["error"]["code"], "invalid_value");
    nlohmann::json bare = ApiError{500, "boom", "server_error", "", ""}.to_json();
    EXPECT_TRUE(bare["error"]["param"].is_null());
    EXPECT_TRUE(bare["error"]["code"].is_null());
}

TEST(OpenAiSchema, ResponseShapes) {
    ResponseMeta meta = make_response_meta(Endpoint::Chat, "tiny");
    EXPECT_EQ(meta.id.rfind("chatcmpl-", 0), 0u);
    Usage u{10, 5, 4, 0.5, 1.0};
    ChatMessageOut msg{"", "thinking", {ToolCall{"call_1", "f", R"({"x":1})"}}};
    nlohmann::json r = chat_response(meta, msg, "tool_calls", u);
    EXPECT_EQ(r["object"], "chat.completion");
    EXPECT_TRUE(r["choices"][0]["message"]["content"].is_null());  // only tool calls
    EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], "thinking");
    EXPECT_EQ(r["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "f");
    EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
    EXPECT_EQ(r["usage"]["total_tokens"], 15);
    EXPECT_EQ(r["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
    EXPECT_EQ(r["timings"]["prompt_n"], 6);  // computed, not cached

    nlohmann::json c = chat_chunk(meta, {{"content", "hi"}}, "");
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
    nlohmann::json uc = usage_chunk(meta, Endpoint::Chat, u);
    EXPECT_TRUE(uc["choices"].empty());
    EXPECT_EQ(uc["usage"]["completion_tokens"], 5);
    nlohmann::json t = completion_response(make_response_meta(Endpoint::Completion, "tiny"), "text", "length", u);
    EXPECT_EQ(t["object"], "text_completion");
    EXPECT_EQ(t["choices"][0]["text"], "text");
    EXPECT_EQ(models_list("tiny", 1, 512)["data"][0]["id"], "tiny");
}

// Bounded fuzz: mutations of valid bodies (bytes flipped, cut, duplicated, values swapped for
// other JSON types) never crash the parser, and every refusal is a 4xx with a message.
TEST(OpenAiSchema, FuzzedBodiesNeverCrash) {
    const std::vector<std::string> seeds = {
        chat_body(R"("temperature":0.5,"stop":["x"],"stream":true,"stream_options":{"include_usage":true},"max_tokens":4)"),
        R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}],"tools":[{"type":"function","function":{"name":"f"}}]})",
    };
    const std::vector<std::string> values = {"null", "true", "-1", "1e308", "\"\"", "[]", "{}", "[[[]]]", "\"\\u0000\"", "0.5"};
    std::mt19937 rng(1234);
    for (int i = 0; i < 3000; ++i) {
        std::string body = seeds[rng() % seeds.size()];
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !body.empty(); ++e) {
            const size_t at = rng() % body.size();
            switch (rng() % 5) {
                case 0: body[at] = static_cast<char>(rng() % 256); break;
                case 1: body.resize(at); break;
                case 2: body.insert(at, body.substr(at, rng() % 20)); break;
                case 3: {  // replace the value after a colon by another JSON value
                    const size_t colon = body.find(':', at);
                    if (colon == std::string::npos) break;
                    size_t end = colon + 1;
                    while (end < body.size() && body[end] != ',' && body[end] != '}') ++end;
                    body.replace(colon + 1, end - colon - 1, values[rng() % values.size()]);
                    break;
                }
                default: body.erase(at, rng() % 8); break;
            }
        }
        for (bool is_chat : {true, false}) {
            auto r = is_chat ? chat(body) : completion(body);
            if (!r) {
                EXPECT_GE(r.error.http_status, 400) << body;
                EXPECT_LT(r.error.http_status, 500) << body;
                EXPECT_FALSE(r.error.message.empty()) << body;
            }
        }
    }
}

}  // namespace
}  // namespace strata::server
