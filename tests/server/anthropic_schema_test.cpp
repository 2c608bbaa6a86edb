// The Anthropic Messages API's request parsing (messages and tools turned into what the chat
// templates read, every refusal naming its field), its error shape, and the content blocks and
// stream events built from the output parser's deltas.
#include <gtest/gtest.h>

#include "server/anthropic_blocks.h"
#include "server/anthropic_schema.h"
#include "server/chat_output.h"

namespace strata::server {
namespace {

using json = nlohmann::json;

ApiResult<GenerationRequest> messages(const std::string& body, MessagesEndpoint endpoint = MessagesEndpoint::Create) {
    return parse_messages_request(body, SamplingParams{}, endpoint);
}

// A request with one user message plus the given extra fields (JSON text without braces).
std::string body_with(const std::string& extra = "") {
    return R"({"model":"claude-x","max_tokens":64,"messages":[{"role":"user","content":"hi"}])" + (extra.empty() ? "" : "," + extra) + "}";
}

void expect_error(const std::string& body, int status, const std::string& param, const std::string& says,
                  MessagesEndpoint endpoint = MessagesEndpoint::Create) {
    auto r = messages(body, endpoint);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error.http_status, status) << body;
    EXPECT_EQ(r.error.param, param) << body << "\nmessage: " << r.error.message;
    EXPECT_NE(r.error.message.find(says), std::string::npos) << "message: " << r.error.message;
}

TEST(AnthropicSchema, ValidRequestTakesEveryField) {
    auto r = messages(body_with(R"("system":"be brief","temperature":0.5,"top_p":0.9,"top_k":20,"stop_sequences":["END","##"],)"
                                R"("stream":true,"metadata":{"user_id":"u-1"})"));
    ASSERT_TRUE(r) << r.error.message;
    const GenerationRequest& g = *r.value;
    EXPECT_EQ(g.endpoint, Endpoint::Chat);
    EXPECT_EQ(g.model, "claude-x");  // any name: echoed back
    EXPECT_EQ(g.max_tokens, 64);
    EXPECT_FLOAT_EQ(g.sampling.temperature, 0.5f);
    EXPECT_FLOAT_EQ(g.sampling.top_p, 0.9f);
    EXPECT_EQ(g.sampling.top_k, 20);
    EXPECT_EQ(g.stop, (std::vector<std::string>{"END", "##"}));
    EXPECT_TRUE(g.stream);
    EXPECT_EQ(g.messages, nlohmann::ordered_json::parse(R"([{"role":"system","content":"be brief"},{"role":"user","content":"hi"}])"));
    EXPECT_TRUE(g.tools.is_null());
}

TEST(AnthropicSchema, ServerDefaultsApplyToSamplingLeftOut) {
    SamplingParams defaults;
    defaults.temperature = 0.3f;
    defaults.top_k = 7;
    auto r = parse_messages_request(body_with(R"("temperature":null)"), defaults, MessagesEndpoint::Create);
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_FLOAT_EQ(r.value->sampling.temperature, 0.3f);
    EXPECT_EQ(r.value->sampling.top_k, 7);
    EXPECT_FALSE(r.value->stream);
}

TEST(AnthropicSchema, BlocksBecomeTheMessagesTemplatesRead) {
    auto r = messages(R"({"model":"m","max_tokens":8,
        "system":[{"type":"text","text":"rule one"},{"type":"text","text":"rule two","cache_control":{"type":"ephemeral"}}],
        "messages":[
          {"role":"user","content":[{"type":"text","text":"weather?"},{"type":"text","text":"in Paris"}]},
          {"role":"assistant","content":[
             {"type":"thinking","thinking":"call the tool","signature":"sig"},
             {"type":"redacted_thinking","data":"opaque"},
             {"type":"text","text":"Let me look."},
             {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
          {"role":"user","content":[
             {"type":"tool_result","tool_use_id":"toolu_1","content":"18 C"},
             {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"no such city"}],"is_error":true},
             {"type":"text","text":"thanks"}]}]})");
    ASSERT_TRUE(r) << r.error.message;
    const auto expected = nlohmann::ordered_json::parse(R"([
        {"role":"system","content":"rule one\nrule two"},
        {"role":"user","content":"weather?\nin Paris"},
        {"role":"assistant","content":"Let me look.","reasoning_content":"call the tool",
         "tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},
        {"role":"tool","tool_call_id":"toolu_1","content":"18 C"},
        {"role":"tool","tool_call_id":"toolu_2","content":"Error: no such city"},
        {"role":"user","content":"thanks"}])");
    EXPECT_EQ(r.value->messages, expected) << r.value->messages.dump(2);
}

TEST(AnthropicSchema, ASystemMessageWithinTheConversationStaysWhereItIs) {
    // Claude Code sends instructions as a "system" message after the first user turn.
    auto r = messages(R"({"model":"m","max_tokens":8,"system":"first","messages":[{"role":"user","content":"hi"},)"
                      R"({"role":"system","content":[{"type":"text","text":"agents: a, b"}]},{"role":"user","content":"go"}]})");
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_EQ(r.value->messages, nlohmann::ordered_json::parse(R"([{"role":"system","content":"first"},{"role":"user","content":"hi"},
        {"role":"system","content":"agents: a, b"},{"role":"user","content":"go"}])"));
}

TEST(AnthropicSchema, TheContextCheckSpeaksAnthropicsWords) {
    EXPECT_FALSE(check_messages_context(100, 412, 512));
    auto over = check_messages_context(100, 64000, 512);
    ASSERT_TRUE(over);
    EXPECT_EQ(over->http_status, 400);
    EXPECT_EQ(over->param, "max_tokens");
    EXPECT_EQ(over->message, "input length and `max_tokens` exceed context limit: 100 + 64000 > 512, decrease input length or `max_tokens` and try again");
    auto long_prompt = check_messages_context(600, 1, 512);
    ASSERT_TRUE(long_prompt);
    EXPECT_EQ(long_prompt->message.rfind("prompt is too long: 600 tokens > 511 maximum", 0), 0u) << long_prompt->message;
    EXPECT_NE(long_prompt->message.find("--ctx-size"), std::string::npos);
}

TEST(AnthropicSchema, ToolsTakeTheOpenAiFormAndToolChoiceForcesACall) {
    const std::string tools = R"("tools":[{"name":"get_weather","description":"Weather now","input_schema":{"type":"object"}},)"
                              R"({"type":"custom","name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}])";
    auto r = messages(body_with(tools + R"(,"tool_choice":{"type":"auto","disable_parallel_tool_use":true})"));
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_EQ(r.value->tools, nlohmann::ordered_json::parse(
                                  R"([{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object"}}},
                                      {"type":"function","function":{"name":"f","parameters":{"type":"object"}}}])"));
    auto none = messages(body_with(tools + R"(,"tool_choice":{"type":"none"})"));
    ASSERT_TRUE(none) << none.error.message;
    EXPECT_TRUE(none.value->tools.is_null());  // not offered to the model at all
    // Forcing a call: the reply is sampled under the grammar of a call (server/constrained_output.h).
    auto any = messages(body_with(tools + R"(,"tool_choice":{"type":"any"})"));
    ASSERT_TRUE(any) << any.error.message;
    EXPECT_EQ(any.value->constraint.kind, OutputConstraint::Kind::ToolCall);
    EXPECT_EQ(any.value->constraint.tool_name, "");
    auto named = messages(body_with(tools + R"(,"tool_choice":{"type":"tool","name":"f"})"));
    ASSERT_TRUE(named) << named.error.message;
    EXPECT_EQ(named.value->constraint.tool_name, "f");
    expect_error(body_with(tools + R"(,"tool_choice":{"type":"tool"})"), 400, "tool_choice", "needs the tool's \"name\"");
    expect_error(body_with(R"("tool_choice":{"type":"any"})"), 400, "tool_choice", "needs tools");
    expect_error(body_with(tools + R"(,"tool_choice":"auto")"), 400, "tool_choice", "expected {\"type\"");
}

TEST(AnthropicSchema, ThinkingSwitchesTheTemplatesReasoning) {
    auto on = messages(body_with(R"("thinking":{"type":"enabled","budget_tokens":2048})"));
    ASSERT_TRUE(on) << on.error.message;
    EXPECT_EQ(on.value->template_kwargs["enable_thinking"], true);
    auto off = messages(body_with(R"("thinking":{"type":"disabled"})"));
    ASSERT_TRUE(off) << off.error.message;
    EXPECT_EQ(off.value->template_kwargs["enable_thinking"], false);
    auto unset = messages(body_with());
    EXPECT_FALSE(unset.value->template_kwargs.contains("enable_thinking"));
    expect_error(body_with(R"("thinking":true)"), 400, "thinking", "expected {\"type\"");
}

TEST(AnthropicSchema, CountTokensNeedsNoGenerationFields) {
    auto r = messages(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", MessagesEndpoint::CountTokens);
    ASSERT_TRUE(r) << r.error.message;
    EXPECT_EQ(r.value->messages.size(), 1u);
    expect_error(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", 400, "max_tokens", "max_tokens: required");
}

TEST(AnthropicSchema, MalformedBodiesAndMissingFieldsAreRefused) {
    expect_error(R"({"model":"m",)", 400, "", "not valid JSON");
    expect_error("[]", 400, "", "expected a JSON object");
    expect_error(R"({"max_tokens":5,"messages":[{"role":"user","content":"hi"}]})", 400, "model", "model: required");
    expect_error(R"({"model":7,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]})", 400, "model", "expected a string");
    expect_error(R"({"model":"m","max_tokens":5})", 400, "messages", "messages: required");
    expect_error(R"({"model":"m","max_tokens":5,"messages":[]})", 400, "messages", "non-empty list");
}

TEST(AnthropicSchema, WrongTypesNameTheField) {
    expect_error(body_with(R"("temperature":1.5)"), 400, "temperature", "from 0 to 1, got 1.5");
    expect_error(body_with(R"("top_p":0)"), 400, "top_p", "above 0");
    expect_error(body_with(R"("top_k":"5")"), 400, "top_k", "expected an integer");
    expect_error(R"({"model":"m","max_tokens":0,"messages":[{"role":"user","content":"hi"}]})", 400, "max_tokens", "from 1");
    expect_error(R"({"model":"m","max_tokens":"9","messages":[{"role":"user","content":"hi"}]})", 400, "max_tokens", "expected an integer");
    expect_error(body_with(R"("stop_sequences":"END")"), 400, "stop_sequences", "expected a list of strings");
    expect_error(body_with(R"("stop_sequences":["a",""])"), 400, "stop_sequences", "non-empty strings");
    expect_error(body_with(R"("stream":1)"), 400, "stream", "true or false");
    expect_error(body_with(R"("metadata":"u")"), 400, "metadata", "expected an object");
    expect_error(body_with(R"("metadata":{"user_id":5})"), 400, "metadata.user_id", "expected a string");
    expect_error(body_with(R"("system":5)"), 400, "system", "a string or a list of text blocks");
    expect_error(body_with(R"("tools":{"name":"f"})"), 400, "tools", "expected a list");
    expect_error(body_with(R"("tools":[{"name":"f"}])"), 400, "tools[0].input_schema", "expected a JSON schema object");
    expect_error(body_with(R"("tools":[{"input_schema":{}}])"), 400, "tools[0].name", "expected a string, got nothing");
    expect_error(body_with(R"("tools":[{"type":"web_search_20250305","name":"web_search"}])"), 400, "tools[0].type", "only client tools");
}

TEST(AnthropicSchema, MessageErrorsNameTheBlock) {
    auto one = [](const std::string& message) { return R"({"model":"m","max_tokens":5,"messages":[)" + message + "]}"; };
    expect_error(one(R"("hi")"), 400, "messages[0]", "expected an object");
    expect_error(one(R"({"role":"king","content":"x"})"), 400, "messages[0].role", "expected \"user\", \"assistant\" or \"system\", got \"king\"");
    expect_error(one(R"({"role":"system","content":[{"type":"image"}]})"), 400, "messages[0].content[0]", "image blocks are not supported");
    expect_error(one(R"({"role":"user"})"), 400, "messages[0].content", "got nothing");
    expect_error(one(R"({"role":"user","content":[{"type":"text","text":5}]})"), 400, "messages[0].content[0].text", "expected a string, got 5");
    expect_error(one(R"({"role":"user","content":[{"text":"x"}]})"), 400, "messages[0].content[0]", "expected a content block");
    expect_error(one(R"({"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]})"),
                 400, "messages[0].content[0]", "image blocks are not supported: the served model reads text only");
    expect_error(one(R"({"role":"user","content":[{"type":"tool_result","content":"x"}]})"), 400, "messages[0].content[0].tool_use_id",
                 "expected a string");
    expect_error(one(R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}]})"), 400,
                 "messages[0].content[0].content[0]", "image blocks are not supported");
    expect_error(one(R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":"yes"}]})"), 400,
                 "messages[0].content[0].is_error", "true or false");
    expect_error(one(R"({"role":"user","content":[{"type":"thinking","thinking":"x"}]})"), 400, "messages[0].content[0]",
                 "'thinking' are not supported");
    expect_error(one(R"({"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"{}"}]},{"role":"user","content":"r"})"),
                 400, "messages[1].content[0].input", "expected an object");
    expect_error(one(R"({"role":"user","content":"q"},{"role":"assistant","content":"The answer is"})"), 400, "messages[1]",
                 "prefilling");
}

TEST(AnthropicSchema, ErrorsTakeAnthropicsShapeAndStatus) {
    auto shape = [](const ApiError& e) { return anthropic_error(e); };
    const AnthropicError bad = shape(ApiError::invalid("x", "x: wrong"));
    EXPECT_EQ(bad.http_status, 400);
    EXPECT_EQ(bad.to_json(), json::parse(R"({"type":"error","error":{"type":"invalid_request_error","message":"x: wrong"}})"));
    EXPECT_EQ(shape(ApiError{401, "key", "authentication_error", "invalid_api_key", ""}).type, "authentication_error");
    EXPECT_EQ(shape(ApiError{404, "no route", "invalid_request_error", "not_found", ""}).type, "not_found_error");
    EXPECT_EQ(shape(ApiError{413, "big", "invalid_request_error", "payload_too_large", ""}).type, "request_too_large");
    const AnthropicError busy = shape(ApiError{503, "busy", "server_error", "server_overloaded", ""});
    EXPECT_EQ(busy.http_status, 529);  // Anthropic's "overloaded", which its clients retry
    EXPECT_EQ(busy.type, "overloaded_error");
    EXPECT_EQ(shape(ApiError{500, "boom", "server_error", "engine_error", ""}).type, "api_error");
    EXPECT_EQ(shape(ApiError{504, "slow", "timeout_error", "timeout", ""}).http_status, 504);
}

TEST(AnthropicSchema, MessageAndUsageShapes) {
    EXPECT_EQ(make_message_id().rfind("msg_", 0), 0u);
    EXPECT_NE(make_message_id(), make_message_id());
    EXPECT_EQ(tool_use_id("call_abc123"), "toolu_abc123");
    EXPECT_EQ(tool_use_id("Ab3dE5gH9"), "toolu_Ab3dE5gH9");
    Usage u;
    u.prompt_tokens = 30;
    u.cached_tokens = 20;
    u.completion_tokens = 5;
    const json m = message_json("msg_1", "claude-x", json::array({{{"type", "text"}, {"text", "hi"}}}), "stop_sequence", "END", u);
    EXPECT_EQ(m, json::parse(R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
        "content":[{"type":"text","text":"hi"}],"stop_reason":"stop_sequence","stop_sequence":"END",
        "usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":20,"output_tokens":5}})"));
    EXPECT_TRUE(message_json("msg_1", "m", json::array(), "", "", u)["stop_reason"].is_null());
    EXPECT_TRUE(message_json("msg_1", "m", json::array(), "end_turn", "", u)["stop_sequence"].is_null());
}

// The deltas a Qwen3-style reply gives: reasoning, then text, then a call.
TEST(AnthropicBlocks, DeltasBecomeBlocksAndTheirEvents) {
    const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(
        R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}])");
    ChatOutputParser parser(tool_calls::ChatFormat::Hermes, "<|im_start|>assistant\n", tools, 1);
    MessageBlocks blocks;
    std::vector<json> events;
    const std::string output = "<think>Need the weather.</think>Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    for (size_t i = 0; i < output.size(); i += 4) {
        for (auto& e : blocks.add(parser.feed_delta(output.substr(i, 4)))) events.push_back(std::move(e));
    }
    for (auto& e : blocks.add(parser.finish_delta())) events.push_back(std::move(e));
    for (auto& e : blocks.close()) events.push_back(std::move(e));

    ASSERT_EQ(blocks.content().size(), 3u) << blocks.content().dump(2);
    EXPECT_EQ(blocks.content()[0], json::parse(R"({"type":"thinking","thinking":"Need the weather.","signature":""})"));
    EXPECT_EQ(blocks.content()[1], json::parse(R"({"type":"text","text":"Checking."})"));
    const json& call = blocks.content()[2];
    EXPECT_EQ(call["type"], "tool_use");
    EXPECT_EQ(call["id"].get<std::string>().rfind("toolu_", 0), 0u);
    EXPECT_EQ(call["name"], "get_weather");
    EXPECT_EQ(call["input"], json::parse(R"({"city":"Paris"})"));
    EXPECT_TRUE(blocks.has_tool_use());

    // Every block starts, takes its deltas and stops, in index order; the deltas add up to it.
    std::vector<std::string> order;
    std::string thinking, text, input_json;
    int expected_index = 0;
    bool open = false;
    for (const json& e : events) {
        const std::string type = e["type"];
        if (order.empty() || order.back() != type) order.push_back(type);
        EXPECT_EQ(e["index"], expected_index) << e.dump();
        if (type == "content_block_start") {
            EXPECT_FALSE(open);
            open = true;
        } else if (type == "content_block_stop") {
            EXPECT_TRUE(open);
            open = false;
            ++expected_index;
        } else {
            ASSERT_EQ(type, "content_block_delta");
            const json& d = e["delta"];
            if (d["type"] == "thinking_delta") thinking += d["thinking"].get<std::string>();
            if (d["type"] == "text_delta") text += d["text"].get<std::string>();
            if (d["type"] == "input_json_delta") input_json += d["partial_json"].get<std::string>();
        }
    }
    EXPECT_FALSE(open);
    EXPECT_EQ(expected_index, 3);
    EXPECT_EQ(thinking, "Need the weather.");
    EXPECT_EQ(text, "Checking.");
    EXPECT_EQ(json::parse(input_json), call["input"]);
    EXPECT_EQ(events.front()["content_block"]["type"], "thinking");
}

TEST(AnthropicBlocks, PlainTextIsOneTextBlockAndNothingIsNoBlock) {
    ChatOutputParser parser(tool_calls::ChatFormat::Generic, "<assistant>", nullptr, 1);
    MessageBlocks blocks;
    size_t starts = 0;
    for (const char* piece : {"In the ", "beginning", " God"}) {
        for (const json& e : blocks.add(parser.feed_delta(piece))) starts += e["type"] == "content_block_start";
    }
    blocks.add(parser.finish_delta());
    EXPECT_EQ(blocks.close().size(), 1u);  // the text block's stop
    EXPECT_EQ(starts, 1u);
    EXPECT_EQ(blocks.content(), json::parse(R"([{"type":"text","text":"In the beginning God"}])"));
    EXPECT_FALSE(blocks.has_tool_use());

    MessageBlocks empty;
    EXPECT_TRUE(empty.close().empty());
    EXPECT_TRUE(empty.content().empty());
}

}  // namespace
}  // namespace strata::server
