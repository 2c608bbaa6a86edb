#include "server/chat_output.h"

namespace strata::server {

nlohmann::json chat_delta_json(const tool_calls::MessageDelta& d) {
    nlohmann::json delta = nlohmann::json::object();
    if (!d.content.empty()) delta["content"] = d.content;
    if (!d.reasoning_content.empty()) delta["reasoning_content"] = d.reasoning_content;
    if (!d.tool_calls.empty()) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& c : d.tool_calls) {
            nlohmann::json call = {{"index", c.index}, {"function", {{"arguments", c.arguments}}}};
            if (!c.id.empty()) call["id"] = c.id;
            if (!c.name.empty()) {
                call["type"] = "function";
                call["function"]["name"] = c.name;
            }
            calls.push_back(std::move(call));
        }
        delta["tool_calls"] = std::move(calls);
    }
    return delta;
}

namespace {
tool_calls::ParserOptions parser_options(tool_calls::ChatFormat format, std::string_view rendered_prompt,
                                         const nlohmann::ordered_json& tools, uint64_t seed) {
    tool_calls::ParserOptions o;
    o.format = format;
    o.thinking_forced_open = tool_calls::prompt_opens_thinking(format, rendered_prompt);
    o.parse_tool_calls = tools.is_array() && !tools.empty();
    if (o.parse_tool_calls) o.tools = tools;
    o.id_seed = seed;
    return o;
}
}  // namespace

ChatOutputParser::ChatOutputParser(tool_calls::ChatFormat format, std::string_view rendered_prompt,
                                   const nlohmann::ordered_json& tools, uint64_t seed)
    : parser_(parser_options(format, rendered_prompt, tools, seed)) {}

tool_calls::MessageDelta ChatOutputParser::feed_delta(std::string_view text) { return parser_.feed(text); }

nlohmann::json ChatOutputParser::feed(std::string_view text) {
    tool_calls::MessageDelta d = feed_delta(text);
    if (d.empty()) return nullptr;
    return chat_delta_json(d);
}

tool_calls::MessageDelta ChatOutputParser::finish_delta() {
    tool_calls::ToolCallParser::Finished done = parser_.finish();
    const tool_calls::ParsedMessage& m = done.message;
    message_.content = m.content;
    message_.reasoning = m.reasoning_content;
    message_.tool_calls.clear();
    for (const auto& c : m.tool_calls) message_.tool_calls.push_back(ToolCall{c.id, c.name, c.arguments});
    problems_ = m.problems;
    return std::move(done.delta);
}

nlohmann::json ChatOutputParser::finish() {
    tool_calls::MessageDelta d = finish_delta();
    if (d.empty()) return nullptr;
    return chat_delta_json(d);
}

}  // namespace strata::server
