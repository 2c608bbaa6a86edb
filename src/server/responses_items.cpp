#include "server/responses_items.h"

#include "server/responses_schema.h"

namespace strata::server {

using json = nlohmann::json;

std::string responses_call_id(std::string_view parser_call_id) {
    constexpr std::string_view kPrefix = "call_";
    if (parser_call_id.substr(0, kPrefix.size()) == kPrefix) return std::string(parser_call_id);
    return std::string(kPrefix) + std::string(parser_call_id);
}

namespace {

// The part an item's text lives in: reasoning_text for reasoning (the model's own thinking, not a
// summary), output_text for a message. logprobs are not computed: an empty list, as OpenAI sends
// when none were asked for.
json empty_part(bool reasoning) {
    if (reasoning) return {{"type", "reasoning_text"}, {"text", ""}};
    return {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}, {"logprobs", json::array()}};
}

}  // namespace

std::vector<json> OutputItems::add(const tool_calls::MessageDelta& d) {
    std::vector<json> events;
    // One feed can finish several kinds; the model writes reasoning before content, and the
    // parser releases a call only once it is whole, after the text before it.
    if (!d.reasoning_content.empty()) append(Open::Reasoning, d.reasoning_content, events);
    if (!d.content.empty()) append(Open::Message, d.content, events);
    for (const auto& call : d.tool_calls) {
        close_open("completed", events);
        json item = {{"id", make_responses_id("fc")},
                     {"type", "function_call"},
                     {"status", "in_progress"},
                     {"arguments", ""},
                     {"call_id", responses_call_id(call.id)},
                     {"name", call.name}};
        if (auto ns = namespaces_.find(call.name); ns != namespaces_.end()) item["namespace"] = ns->second;
        output_.push_back(item);
        const std::string item_id = item["id"];
        events.push_back({{"type", "response.output_item.added"}, {"output_index", index()}, {"item", item}});
        // The parser releases a call whole: its arguments arrive as one delta.
        events.push_back({{"type", "response.function_call_arguments.delta"}, {"item_id", item_id}, {"output_index", index()}, {"delta", call.arguments}});
        events.push_back({{"type", "response.function_call_arguments.done"},
                          {"item_id", item_id},
                          {"output_index", index()},
                          {"name", call.name},
                          {"arguments", call.arguments}});
        json& done = output_.back();
        done["arguments"] = call.arguments;
        done["status"] = "completed";
        events.push_back({{"type", "response.output_item.done"}, {"output_index", index()}, {"item", done}});
    }
    return events;
}

std::vector<json> OutputItems::close(bool incomplete) {
    std::vector<json> events;
    close_open(incomplete ? "incomplete" : "completed", events);
    return events;
}

void OutputItems::append(Open kind, const std::string& text, std::vector<json>& events) {
    const bool reasoning = kind == Open::Reasoning;
    if (reasoning) reasoning_ += text;
    if (open_ != kind) {
        close_open("completed", events);
        json item = reasoning ? json{{"id", make_responses_id("rs")}, {"type", "reasoning"}, {"status", "in_progress"}, {"summary", json::array()}, {"content", json::array()}}
                              : json{{"id", make_responses_id("msg")}, {"type", "message"}, {"status", "in_progress"}, {"role", "assistant"}, {"content", json::array()}};
        output_.push_back(item);
        events.push_back({{"type", "response.output_item.added"}, {"output_index", index()}, {"item", item}});
        output_.back()["content"].push_back(empty_part(reasoning));
        events.push_back({{"type", "response.content_part.added"},
                          {"item_id", item["id"]},
                          {"output_index", index()},
                          {"content_index", 0},
                          {"part", empty_part(reasoning)}});
        open_ = kind;
    }
    json& item = output_.back();
    item["content"][0]["text"].get_ref<std::string&>() += text;
    json delta = {{"type", reasoning ? "response.reasoning_text.delta" : "response.output_text.delta"},
                  {"item_id", item["id"]},
                  {"output_index", index()},
                  {"content_index", 0},
                  {"delta", text}};
    if (!reasoning) delta["logprobs"] = json::array();
    events.push_back(std::move(delta));
}

void OutputItems::close_open(const char* status, std::vector<json>& events) {
    if (open_ == Open::None) return;
    const bool reasoning = open_ == Open::Reasoning;
    json& item = output_.back();
    const json& part = item["content"][0];
    json done = {{"type", reasoning ? "response.reasoning_text.done" : "response.output_text.done"},
                 {"item_id", item["id"]},
                 {"output_index", index()},
                 {"content_index", 0},
                 {"text", part["text"]}};
    if (!reasoning) done["logprobs"] = json::array();
    events.push_back(std::move(done));
    events.push_back({{"type", "response.content_part.done"}, {"item_id", item["id"]}, {"output_index", index()}, {"content_index", 0}, {"part", part}});
    item["status"] = status;
    events.push_back({{"type", "response.output_item.done"}, {"output_index", index()}, {"item", item}});
    open_ = Open::None;
}

}  // namespace strata::server
