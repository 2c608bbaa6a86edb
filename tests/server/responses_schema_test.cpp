// The OpenAI Responses API's request parsing (input items turned into what the chat templates
// read, the settings kept to be echoed, every refusal naming its field), the response object, the
// output items and stream events built from the output parser's deltas, and the bounded store.
#include <gtest/gtest.h>

#include "server/responses_items.h"
#include "server/responses_schema.h"
#include "server/responses_store.h"

namespace strata::server {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

ApiResult<ResponsesRequest> parse(const std::string& body, ResponsesEndpoint endpoint = ResponsesEndpoint::Create) {
    return parse_responses_request(body, SamplingParams{}, endpoint);
}

// A request with a string input plus the given extra fields (JSON text without braces).
std::string body_with(const std::string& extra = "") {
    return R"({"model":"gpt-x","input":"hi")" + (extra.empty() ? "" : "," + extra) + "}";
}

void expect_error(const std::string& body, int status, const std::string& param, const std::string& says) {
    auto r = parse(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error.http_status, status) << body;
    EXPECT_EQ(r.error.param, param) << body << "\nmessage: " << r.error.message;
    EXPECT_NE(r.error.message.find(says), std::string::npos) << "message: " << r.error.message;
}

TEST(ResponsesSchema, AStringInputWithEverySetting) {
    auto r = parse(body_with(R"("instructions":"be brief","temperature":0.5,"top_p":0.9,"max_output_tokens":64,"stream":true,)"
                             R"("store":false,"metadata":{"k":"v"},"parallel_tool_calls":false,"text":{"format":{"type":"text"},"verbosity":"low"},)"
                             R"("reasoning":{"effort":"minimal"},"user":"u","truncation":"disabled","include":["reasoning.encrypted_content"])"));
    ASSERT_TRUE(r) << r.error.message;
    ResponsesRequest& q = *r.value;
    EXPECT_EQ(q.generation.model, "gpt-x");  // any name: echoed back
    EXPECT_EQ(q.generation.max_tokens, 64);
    EXPECT_EQ(q.max_output_tokens, 64);
    EXPECT_FLOAT_EQ(q.generation.sampling.temperature, 0.5f);
    EXPECT_FLOAT_EQ(q.generation.sampling.top_p, 0.9f);
    EXPECT_TRUE(q.generation.stream);
    EXPECT_FALSE(q.store);
    EXPECT_FALSE(q.parallel_tool_calls);
    EXPECT_EQ(q.metadata, ojson::parse(R"({"k":"v"})"));
    EXPECT_EQ(q.text, ojson::parse(R"({"format":{"type":"text"},"verbosity":"low"})"));
    EXPECT_EQ(q.generation.template_kwargs["enable_thinking"], false);
    assemble_messages(q, nullptr);
    EXPECT_EQ(q.generation.messages, ojson::parse(R"([{"role":"system","content":"be brief"},{"role":"user","content":"hi"}])"));
    EXPECT_EQ(q.conversation, ojson::parse(R"([{"role":"user","content":"hi"}])"));  // instructions are not carried over
    EXPECT_TRUE(q.generation.tools.is_null());
}

TEST(ResponsesSchema, StoreDefaultsToTrueAndServerDefaultsApply) {
    SamplingParams defaults;
    defaults.temperature = 0.3f;
    auto r = parse_responses_request(body_with(R"("temperature":null)"), defaults, ResponsesEndpoint::Create);
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_TRUE(r.value->store);
    EXPECT_FLOAT_EQ(r.value->generation.sampling.temperature, 0.3f);
    EXPECT_FALSE(r.value->generation.max_tokens);
}

TEST(ResponsesSchema, InputItemsBecomeTheTemplatesMessages) {
    // A turn as OpenAI lists it: reasoning, a message and two calls, then the calls' outputs.
    auto r = parse(R"({"model":"m","input":[
        {"role":"developer","content":"rules"},
        {"type":"message","role":"user","content":[{"type":"input_text","text":"weather?"},{"type":"input_text","text":"both cities"}]},
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"short"}],"content":[{"type":"reasoning_text","text":"Ask the tool."}]},
        {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking.","annotations":[]}]},
        {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
        {"type":"function_call","call_id":"call_2","name":"get_weather","arguments":"not json"},
        {"type":"function_call_output","call_id":"call_1","output":"18 C"},
        {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"20 C"}]},
        {"role":"user","content":"thanks"}]})");
    ASSERT_TRUE(r) << r.error.message;
    assemble_messages(*r.value, nullptr);
    EXPECT_EQ(r.value->generation.messages, ojson::parse(R"([
        {"role":"system","content":"rules"},
        {"role":"user","content":"weather?\nboth cities"},
        {"role":"assistant","content":"Checking.","reasoning_content":"Ask the tool.","tool_calls":[
            {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}},
            {"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"not json"}}]},
        {"role":"tool","tool_call_id":"call_1","content":"18 C"},
        {"role":"tool","tool_call_id":"call_2","content":"20 C"},
        {"role":"user","content":"thanks"}])"));
}

TEST(ResponsesSchema, APreviousConversationComesBeforeTheInput) {
    auto r = parse(body_with(R"("instructions":"new rules","previous_response_id":"resp_1")"));
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_EQ(r.value->previous_response_id, "resp_1");
    const ojson previous = ojson::parse(R"([{"role":"user","content":"first"},{"role":"assistant","content":"one"}])");
    assemble_messages(*r.value, &previous);
    EXPECT_EQ(r.value->generation.messages, ojson::parse(R"([{"role":"system","content":"new rules"},{"role":"user","content":"first"},
        {"role":"assistant","content":"one"},{"role":"user","content":"hi"}])"));
    EXPECT_EQ(r.value->conversation.size(), 3u);
}

TEST(ResponsesSchema, FunctionToolsAreEchoedAndRenderedAsTheChatRouteDoes) {
    auto r = parse(body_with(R"("tools":[{"type":"function","name":"get_weather","description":"The weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true},{"type":"function","name":"now"}],"tool_choice":"auto")"));
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_EQ(r.value->generation.tools, ojson::parse(R"([
        {"type":"function","function":{"name":"get_weather","description":"The weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
        {"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}])"));
    EXPECT_EQ(r.value->tools[0], ojson::parse(R"({"type":"function","name":"get_weather","description":"The weather",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true})"));
    EXPECT_TRUE(r.value->tools[1]["description"].is_null());
    EXPECT_EQ(r.value->tool_choice, "auto");

    // As Codex CLI sends them: a namespace's functions are offered by name, a hosted tool is only echoed.
    auto agent = parse(body_with(R"("tools":[{"type":"namespace","name":"agents","description":"d","tools":[{"type":"function","name":"spawn","parameters":{"type":"object"}}]},{"type":"web_search","external_web_access":false}])"));
    ASSERT_TRUE(agent) << agent.error.message;
    EXPECT_EQ(agent.value->generation.tools, ojson::parse(R"([{"type":"function","function":{"name":"spawn","parameters":{"type":"object"}}}])"));
    EXPECT_EQ(agent.value->function_namespaces.at("spawn"), "agents");
    EXPECT_EQ(agent.value->tools.size(), 2u);
    EXPECT_EQ(agent.value->tools[1]["type"], "web_search");
    auto hosted_only = parse(body_with(R"("tools":[{"type":"web_search"}])"));
    ASSERT_TRUE(hosted_only) << hosted_only.error.message;
    EXPECT_TRUE(hosted_only.value->generation.tools.is_null());

    // A forced call is sampled under a call's grammar.
    auto required = parse(body_with(R"("tools":[{"type":"function","name":"now"}],"tool_choice":"required")"));
    ASSERT_TRUE(required) << required.error.message;
    EXPECT_EQ(required.value->generation.constraint.kind, OutputConstraint::Kind::ToolCall);
    EXPECT_EQ(required.value->generation.constraint.tool_name, "");
    EXPECT_EQ(required.value->tool_choice, "required");
    auto named = parse(body_with(R"("tools":[{"type":"function","name":"now"}],"tool_choice":{"type":"function","name":"now"})"));
    ASSERT_TRUE(named) << named.error.message;
    EXPECT_EQ(named.value->generation.constraint.tool_name, "now");
    EXPECT_EQ(named.value->tool_choice, ojson::parse(R"({"type":"function","name":"now"})"));

    auto none = parse(body_with(R"("tools":[{"type":"function","name":"now"}],"tool_choice":"none")"));
    ASSERT_TRUE(none) << none.error.message;
    EXPECT_TRUE(none.value->generation.tools.is_null());  // not offered to the model
    EXPECT_EQ(none.value->tools.size(), 1u);               // but echoed
}

TEST(ResponsesSchema, RefusalsNameTheirField) {
    expect_error("{\"model\":", 400, "", "not valid JSON");
    expect_error(R"({"input":"x"})", 400, "model", "model: required");
    expect_error(R"({"model":"m"})", 400, "input", "input: required");
    expect_error(R"({"model":"m","input":42})", 400, "input", "expected a string or a list of input items, got 42");
    expect_error(R"({"model":"m","input":[{"role":"tool","content":"x"}]})", 400, "input[0].role", "expected \"user\"");
    expect_error(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]})", 400,
                 "input[0].content[0]", "'input_image' are not supported: the served model reads text only");
    expect_error(R"({"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":{}}]})", 400,
                 "input[0].arguments", "input[0].arguments: expected a string, got {}");
    expect_error(R"({"model":"m","input":[{"type":"function_call_output","call_id":"c"}]})", 400, "input[0].output", "required");
    expect_error(R"({"model":"m","input":[{"type":"item_reference","id":"x"}]})", 400, "input[0].type", "'item_reference' are not supported");
    expect_error(body_with(R"("temperature":3)"), 400, "temperature", "temperature: expected a number from 0 to 2, got 3");
    expect_error(body_with(R"("max_output_tokens":0)"), 400, "max_output_tokens", "expected an integer from 1");
    expect_error(body_with(R"("store":"yes")"), 400, "store", "store: expected true or false");
    expect_error(body_with(R"("tools":[{"type":"custom","name":"apply_patch"}])"), 400, "tools[0].type", "tools of type 'custom' are not supported");
    expect_error(body_with(R"("tools":[{"type":"namespace","name":"ns","tools":[{"type":"custom","name":"x"}]}])"), 400, "tools[0].tools[0]",
                 "a namespace holds function tools here");
    expect_error(body_with(R"("tools":[{"type":"function"}])"), 400, "tools[0].name", "expected a string, got nothing");
    expect_error(body_with(R"("tool_choice":"required")"), 400, "tool_choice", "offers no function tools");
    expect_error(body_with(R"("tool_choice":{"type":"function"})"), 400, "tool_choice.name", "expected the name of a function tool");
    expect_error(body_with(R"("tool_choice":"sometimes")"), 400, "tool_choice", "expected \"auto\"");
    expect_error(body_with(R"("text":{"format":{"type":"xml"}})"), 400, "text.format", "expected {\"type\": \"text\" | \"json_object\"");
    expect_error(body_with(R"("text":{"format":{"type":"json_schema","name":"x"}})"), 400, "text.format.schema", "expected a JSON schema (an object), got nothing");
    expect_error(body_with(R"("text":{"format":{"type":"json_schema","name":"x","schema":{},"strict":"yes"}})"), 400, "text.format.strict", "expected true or false");
    expect_error(body_with(R"("tools":[{"type":"function","name":"f"}],"tool_choice":"required","text":{"format":{"type":"json_object"}})"), 400,
                 "text.format", "a forced tool_choice already fixes the output");
    expect_error(body_with(R"("metadata":{"k":1})"), 400, "metadata", "metadata.k: expected");
    expect_error(body_with(R"("previous_response_id":7)"), 400, "previous_response_id", "expected a response id");
    expect_error(body_with(R"("background":true)"), 400, "background", "not supported");
}

TEST(ResponsesSchema, JsonTextFormatsBecomeTheOutputConstraintAndAreEchoed) {
    auto obj = parse(body_with(R"("text":{"format":{"type":"json_object"}})"));
    ASSERT_TRUE(obj) << obj.error.message;
    EXPECT_EQ(obj.value->generation.constraint.kind, OutputConstraint::Kind::JsonObject);
    EXPECT_EQ(obj.value->text["format"]["type"], "json_object");

    auto sch = parse(body_with(R"("text":{"format":{"type":"json_schema","name":"p","strict":true,)"
                               R"("schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}})"));
    ASSERT_TRUE(sch) << sch.error.message;
    const OutputConstraint& c = sch.value->generation.constraint;
    EXPECT_EQ(c.kind, OutputConstraint::Kind::JsonSchema);
    EXPECT_TRUE(c.strict);
    EXPECT_EQ(c.schema["required"][0], "a");
    EXPECT_EQ(sch.value->text["format"]["name"], "p");

    auto plain = parse(body_with(R"("text":{"format":{"type":"text"}})"));
    ASSERT_TRUE(plain) << plain.error.message;
    EXPECT_EQ(plain.value->generation.constraint.kind, OutputConstraint::Kind::None);
}

TEST(ResponsesSchema, CountingInputTokensNeedsNoModel) {
    auto r = parse(R"({"input":"hi","tools":[{"type":"function","name":"f"}]})", ResponsesEndpoint::InputTokens);
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_EQ(r.value->input_messages.size(), 1u);
}

TEST(ResponsesSchema, TheContextCheckUsesThisApisFieldNames) {
    auto e = check_responses_context(600, std::nullopt, 512);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->param, "input");
    EXPECT_EQ(e->code, "context_length_exceeded");
    e = check_responses_context(100, 1000, 512);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->param, "max_output_tokens");
    EXPECT_NE(e->message.find("ask for at most 412"), std::string::npos) << e->message;
    EXPECT_FALSE(check_responses_context(100, 412, 512));
}

TEST(ResponsesSchema, TheResponseObjectEchoesTheSettings) {
    auto r = parse(body_with(R"("instructions":"i","temperature":0.95,"max_output_tokens":9,"previous_response_id":"resp_p")"));
    ASSERT_TRUE(r) << r.error.message;
    ResponseState s;
    s.id = "resp_1";
    s.created_at = 1700000000;
    s.status = "incomplete";
    s.usage = Usage{.prompt_tokens = 10, .completion_tokens = 9, .cached_tokens = 4};
    s.reasoning_tokens = 2;
    const json j = response_json(*r.value, s);
    EXPECT_EQ(j["object"], "response");
    EXPECT_EQ(j["incomplete_details"], json::parse(R"({"reason":"max_output_tokens"})"));
    EXPECT_EQ(j["instructions"], "i");
    EXPECT_EQ(j["temperature"], 0.95);  // rounded from the float
    EXPECT_EQ(j["max_output_tokens"], 9);
    EXPECT_EQ(j["previous_response_id"], "resp_p");
    EXPECT_EQ(j["store"], true);
    EXPECT_EQ(j["tool_choice"], "auto");
    EXPECT_EQ(j["text"], json::parse(R"({"format":{"type":"text"}})"));
    EXPECT_TRUE(j["error"].is_null());
    EXPECT_EQ(j["usage"], json::parse(R"({"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":9,
        "output_tokens_details":{"reasoning_tokens":2},"total_tokens":19})"));
    s.status = "in_progress";
    s.usage.reset();
    EXPECT_TRUE(response_json(*r.value, s)["usage"].is_null());
    EXPECT_TRUE(response_json(*r.value, s)["incomplete_details"].is_null());
}

TEST(ResponsesSchema, IdsCarryTheirPrefixAndDiffer) {
    const std::string a = make_responses_id("resp"), b = make_responses_id("resp");
    EXPECT_EQ(a.rfind("resp_", 0), 0u);
    EXPECT_NE(a, b);
    EXPECT_EQ(responses_call_id("call_abc"), "call_abc");
    EXPECT_EQ(responses_call_id("abc"), "call_abc");
}

// The event types of a list, in order.
std::vector<std::string> types(const std::vector<json>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e["type"]);
    return out;
}

TEST(ResponsesItems, ReasoningThenTextThenACallAreThreeItems) {
    OutputItems items;
    tool_calls::MessageDelta thinking;
    thinking.reasoning_content = "Ask ";
    auto ev = items.add(thinking);
    EXPECT_EQ(types(ev), (std::vector<std::string>{"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta"}));
    EXPECT_EQ(ev[0]["item"]["type"], "reasoning");
    EXPECT_EQ(ev[1]["part"], json::parse(R"({"type":"reasoning_text","text":""})"));
    thinking.reasoning_content = "the tool.";
    EXPECT_EQ(types(items.add(thinking)), std::vector<std::string>{"response.reasoning_text.delta"});

    tool_calls::MessageDelta text;
    text.content = "Checking.";
    ev = items.add(text);
    EXPECT_EQ(types(ev), (std::vector<std::string>{"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
                                                   "response.output_item.added", "response.content_part.added", "response.output_text.delta"}));
    EXPECT_EQ(ev[0]["text"], "Ask the tool.");
    EXPECT_EQ(ev[2]["item"]["status"], "completed");
    EXPECT_EQ(ev[5]["output_index"], 1);
    EXPECT_EQ(ev[5]["item_id"], ev[3]["item"]["id"]);

    tool_calls::MessageDelta call;
    call.tool_calls.push_back({0, "call_7", "get_weather", R"({"city":"Paris"})"});
    ev = items.add(call);
    EXPECT_EQ(types(ev), (std::vector<std::string>{"response.output_text.done", "response.content_part.done", "response.output_item.done",
                                                   "response.output_item.added", "response.function_call_arguments.delta",
                                                   "response.function_call_arguments.done", "response.output_item.done"}));
    EXPECT_EQ(ev[3]["item"]["arguments"], "");
    EXPECT_EQ(ev[4]["delta"], R"({"city":"Paris"})");
    EXPECT_TRUE(items.close(false).empty());  // nothing open after a call

    const json& out = items.output();
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0]["id"].get<std::string>().rfind("rs_", 0), 0u);
    EXPECT_EQ(out[0]["summary"], json::array());
    EXPECT_EQ(out[0]["content"], json::parse(R"([{"type":"reasoning_text","text":"Ask the tool."}])"));
    EXPECT_EQ(out[1]["id"].get<std::string>().rfind("msg_", 0), 0u);
    EXPECT_EQ(out[1]["role"], "assistant");
    EXPECT_EQ(out[1]["status"], "completed");
    EXPECT_EQ(out[1]["content"], json::parse(R"([{"type":"output_text","text":"Checking.","annotations":[],"logprobs":[]}])"));
    EXPECT_EQ(out[2]["id"].get<std::string>().rfind("fc_", 0), 0u);
    EXPECT_EQ(out[2]["call_id"], "call_7");
    EXPECT_EQ(out[2]["name"], "get_weather");
    EXPECT_EQ(out[2]["arguments"], R"({"city":"Paris"})");
    EXPECT_EQ(out[2]["status"], "completed");
    EXPECT_EQ(items.reasoning_text(), "Ask the tool.");
}

TEST(ResponsesItems, ACallToANamespacedFunctionNamesItsNamespace) {
    OutputItems items(std::map<std::string, std::string>{{"spawn", "agents"}});
    tool_calls::MessageDelta call;
    call.tool_calls.push_back({0, "call_1", "spawn", "{}"});
    call.tool_calls.push_back({1, "call_2", "other", "{}"});
    items.add(call);
    EXPECT_EQ(items.output()[0]["namespace"], "agents");
    EXPECT_FALSE(items.output()[1].contains("namespace"));
}

TEST(ResponsesItems, AReplyCutShortIsIncomplete) {
    OutputItems items;
    tool_calls::MessageDelta text;
    text.content = "In the";
    items.add(text);
    const auto ev = items.close(/*incomplete=*/true);
    ASSERT_EQ(types(ev), (std::vector<std::string>{"response.output_text.done", "response.content_part.done", "response.output_item.done"}));
    EXPECT_EQ(ev[2]["item"]["status"], "incomplete");
    EXPECT_EQ(items.output()[0]["status"], "incomplete");
}

TEST(ResponsesStore, KeepsAtMostItsCapacityDroppingTheLeastRecentlyUsed) {
    ResponseStore store(2);
    store.put("a", {json{{"id", "a"}}, ojson::array()});
    store.put("b", {json{{"id", "b"}}, ojson::array()});
    ASSERT_TRUE(store.get("a"));  // a is now the most recently used
    store.put("c", {json{{"id", "c"}}, ojson::array()});
    EXPECT_EQ(store.size(), 2u);
    EXPECT_FALSE(store.get("b"));
    EXPECT_EQ(store.get("a")->response["id"], "a");
    EXPECT_TRUE(store.get("c"));
    // Putting an id again replaces it without growing.
    store.put("c", {json{{"id", "c2"}}, ojson::array()});
    EXPECT_EQ(store.size(), 2u);
    EXPECT_EQ(store.get("c")->response["id"], "c2");
    EXPECT_TRUE(store.erase("c"));
    EXPECT_FALSE(store.erase("c"));
    EXPECT_FALSE(store.get("c"));

    ResponseStore none(0);
    none.put("a", {json::object(), ojson::array()});
    EXPECT_FALSE(none.get("a"));
}

}  // namespace
}  // namespace strata::server
