#pragma once
// The content blocks of an Anthropic reply, built from the chat output parser's deltas in the
// order the model wrote them: a thinking block for reasoning, a text block for content, a
// tool_use block per call, a new block whenever the kind changes. Streamed and whole answers go
// through the same builder, so a stream's events add up to exactly the whole answer's content.
//
//   MessageBlocks blocks;
//   for (const auto& ev : blocks.add(parser.feed_delta(piece))) send(ev);   // content_block_* events
//   blocks.add(parser.finish_delta());  blocks.close();
//   blocks.content();   // [{"type":"text","text":"..."}, {"type":"tool_use","id":"toolu_...","name":...,"input":{...}}]

#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tool_calls/tool_call_parser.h"

namespace strata::server {

class MessageBlocks {
public:
    // The stream events this delta makes (content_block_start / _delta / _stop), each with its
    // "type"; the blocks grow by the same text.
    std::vector<nlohmann::json> add(const tool_calls::MessageDelta& delta);
    // The end of the reply: the open block's content_block_stop, if a block is open.
    std::vector<nlohmann::json> close();

    const nlohmann::json& content() const { return content_; }
    bool has_tool_use() const { return has_tool_use_; }

private:
    enum class Open { None, Thinking, Text };
    // Continues the open block of kind `kind` with `text`, or closes the open one and starts it.
    void append(Open kind, const std::string& text, std::vector<nlohmann::json>& events);
    void close_open(std::vector<nlohmann::json>& events);
    int index() const { return static_cast<int>(content_.size()) - 1; }

    nlohmann::json content_ = nlohmann::json::array();
    Open open_ = Open::None;
    bool has_tool_use_ = false;
};

}  // namespace strata::server
