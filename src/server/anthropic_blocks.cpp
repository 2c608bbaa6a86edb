#include "server/anthropic_blocks.h"

#include "server/anthropic_schema.h"

namespace strata::server {

using json = nlohmann::json;

std::vector<json> MessageBlocks::add(const tool_calls::MessageDelta& d) {
    std::vector<json> events;
    // One feed can finish several kinds; the model writes reasoning before content, and the
    // parser releases a call only once it is whole, after the text before it.
    if (!d.reasoning_content.empty()) append(Open::Thinking, d.reasoning_content, events);
    if (!d.content.empty()) append(Open::Text, d.content, events);
    for (const auto& call : d.tool_calls) {
        close_open(events);
        // The parser checked the arguments: a JSON object. Should that ever fail, the call keeps
        // an empty input rather than taking the server down.
        json input = json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
        if (input.is_discarded() || !input.is_object()) input = json::object();
        const std::string id = tool_use_id(call.id);
        content_.push_back({{"type", "tool_use"}, {"id", id}, {"name", call.name}, {"input", input}});
        has_tool_use_ = true;
        // As Anthropic streams a call: the block starts with an empty input, the arguments follow
        // as JSON text (here in one piece, as the parser releases calls whole).
        events.push_back({{"type", "content_block_start"},
                          {"index", index()},
                          {"content_block", {{"type", "tool_use"}, {"id", id}, {"name", call.name}, {"input", json::object()}}}});
        events.push_back({{"type", "content_block_delta"},
                          {"index", index()},
                          {"delta", {{"type", "input_json_delta"}, {"partial_json", input.dump()}}}});
        events.push_back({{"type", "content_block_stop"}, {"index", index()}});
    }
    return events;
}

std::vector<json> MessageBlocks::close() {
    std::vector<json> events;
    close_open(events);
    return events;
}

void MessageBlocks::append(Open kind, const std::string& text, std::vector<json>& events) {
    const bool thinking = kind == Open::Thinking;
    const char* key = thinking ? "thinking" : "text";
    if (open_ != kind) {
        close_open(events);
        // Anthropic signs thinking blocks so that they can be verified when sent back; this server
        // has nothing to sign with, and leaves the signature empty.
        json block = thinking ? json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}} : json{{"type", "text"}, {"text", ""}};
        content_.push_back(block);
        events.push_back({{"type", "content_block_start"}, {"index", index()}, {"content_block", std::move(block)}});
        open_ = kind;
    }
    content_.back()[key].get_ref<std::string&>() += text;
    events.push_back({{"type", "content_block_delta"},
                      {"index", index()},
                      {"delta", {{"type", thinking ? "thinking_delta" : "text_delta"}, {key, text}}}});
}

void MessageBlocks::close_open(std::vector<json>& events) {
    if (open_ == Open::None) return;
    events.push_back({{"type", "content_block_stop"}, {"index", index()}});
    open_ = Open::None;
}

}  // namespace strata::server
