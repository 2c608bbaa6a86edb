#pragma once
// The assistant's raw output split into what the chat API returns (content, reasoning_content
// and tool calls), as delta objects while streaming and as a whole message at the end. The one
// place the server meets the model-specific tool-call / reasoning parser (tokenizer/tool_calls),
// whose syntax is recognised once from the chat template.
//
//   ChatOutputParser parser(format, rendered_prompt, request.tools, request.sampling.seed);
//   nlohmann::json d = parser.feed(piece);   // a chunk's "delta", or null when nothing is final yet
//   nlohmann::json last = parser.finish();
//   parser.message();                        // the whole reply; has_tool_calls() → "tool_calls"

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/openai_schema.h"
#include "tokenizer/tool_calls/tool_call_parser.h"

namespace strata::server {

// The "delta" object of a chat.completion.chunk.
nlohmann::json chat_delta_json(const tool_calls::MessageDelta& d);

class ChatOutputParser {
public:
    // `tools`: the request's tools (null: tool-call markers stay ordinary content).
    ChatOutputParser(tool_calls::ChatFormat format, std::string_view rendered_prompt, const nlohmann::ordered_json& tools,
                     uint64_t seed);

    nlohmann::json feed(std::string_view text);
    nlohmann::json finish();
    // The same, as the parser's deltas, for APIs that shape them otherwise (Anthropic's blocks).
    tool_calls::MessageDelta feed_delta(std::string_view text);
    tool_calls::MessageDelta finish_delta();
    const ChatMessageOut& message() const { return message_; }
    bool has_tool_calls() const { return !message_.tool_calls.empty(); }
    // Malformed calls the parser returned as content, for the server log.
    const std::vector<std::string>& problems() const { return problems_; }

private:
    tool_calls::ToolCallParser parser_;
    ChatMessageOut message_;
    std::vector<std::string> problems_;
};

}  // namespace strata::server
