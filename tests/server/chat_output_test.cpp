// The server's use of the tool-call / reasoning parser: streamed deltas in the OpenAI chunk shape,
// a whole message for non-streamed answers, and tool calls only when the request had tools.
#include <gtest/gtest.h>

#include "server/chat_output.h"

namespace strata::server {
namespace {

const nlohmann::ordered_json kTools = nlohmann::ordered_json::parse(
    R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}])");

// Feeds the text in pieces of `step` bytes and returns every non-null delta, the final one included.
std::vector<nlohmann::json> run(ChatOutputParser& p, const std::string& text, size_t step = 3) {
    std::vector<nlohmann::json> deltas;
    for (size_t i = 0; i < text.size(); i += step) {
        nlohmann::json d = p.feed(text.substr(i, step));
        if (!d.is_null()) deltas.push_back(d);
    }
    nlohmann::json last = p.finish();
    if (!last.is_null()) deltas.push_back(last);
    return deltas;
}

std::string joined(const std::vector<nlohmann::json>& deltas, const char* field) {
    std::string out;
    for (const auto& d : deltas) {
        if (d.contains(field)) out += d[field].get<std::string>();
    }
    return out;
}

TEST(ChatOutput, PlainTextIsContent) {
    ChatOutputParser p(tool_calls::ChatFormat::Generic, "<user>hi\n<assistant>", nullptr, 1);
    auto deltas = run(p, "Hello there, friend.");
    EXPECT_EQ(joined(deltas, "content"), "Hello there, friend.");
    EXPECT_EQ(p.message().content, "Hello there, friend.");
    EXPECT_FALSE(p.has_tool_calls());
}

TEST(ChatOutput, HermesToolCallBecomesAToolCallDelta) {
    ChatOutputParser p(tool_calls::ChatFormat::Hermes, "<|im_start|>assistant\n", kTools, 42);
    auto deltas = run(p, "Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
    ASSERT_TRUE(p.has_tool_calls());
    EXPECT_EQ(p.message().content, "Let me check.");
    EXPECT_EQ(p.message().tool_calls[0].name, "get_weather");
    EXPECT_EQ(nlohmann::json::parse(p.message().tool_calls[0].arguments)["city"], "Paris");
    // The stream carries the same call, in the OpenAI delta shape.
    const nlohmann::json* call = nullptr;
    for (const auto& d : deltas) {
        if (d.contains("tool_calls")) call = &d["tool_calls"][0];
    }
    ASSERT_NE(call, nullptr);
    EXPECT_EQ((*call)["index"], 0);
    EXPECT_EQ((*call)["type"], "function");
    EXPECT_EQ((*call)["function"]["name"], "get_weather");
    EXPECT_EQ((*call)["id"], p.message().tool_calls[0].id);
    EXPECT_FALSE((*call)["id"].get<std::string>().empty());
    EXPECT_EQ(joined(deltas, "content"), "Let me check.");
}

TEST(ChatOutput, WithoutToolsCallMarkersStayContent) {
    const std::string text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>";
    ChatOutputParser p(tool_calls::ChatFormat::Hermes, "", nullptr, 1);
    auto deltas = run(p, text);
    EXPECT_FALSE(p.has_tool_calls());
    EXPECT_EQ(joined(deltas, "content"), text);
}

TEST(ChatOutput, ReasoningIsSplitOut) {
    ChatOutputParser p(tool_calls::ChatFormat::Hermes, "", nullptr, 1);
    auto deltas = run(p, "<think>Weigh it.</think>The answer.");
    EXPECT_EQ(joined(deltas, "reasoning_content"), p.message().reasoning);
    EXPECT_NE(p.message().reasoning.find("Weigh it."), std::string::npos);
    EXPECT_EQ(p.message().content, "The answer.");
}

}  // namespace
}  // namespace strata::server
