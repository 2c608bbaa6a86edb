#pragma once
// The output items of an OpenAI Responses reply, built from the chat output parser's deltas in
// the order the model wrote them: a reasoning item for thinking, a message item (one output_text
// part) for text, a function_call item per call, a new item whenever the kind changes. Streamed
// and whole answers go through the same builder, so a stream's events add up to exactly the
// whole answer's output. The events carry their "type" and indexes; the route numbers them.
//
//   OutputItems items;
//   for (auto& ev : items.add(parser.feed_delta(piece))) send(ev);   // response.output_item.added, ...
//   items.add(parser.finish_delta());  items.close(/*incomplete=*/false);
//   items.output();   // [{"type":"message","id":"msg_...","content":[{"type":"output_text",...}]}, ...]

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tool_calls/tool_call_parser.h"

namespace strata::server {

// A call's call_id from the output parser's id ("call_..." already, or a bare id from a template
// that writes its own): the id the client's function_call_output names.
std::string responses_call_id(std::string_view parser_call_id);

class OutputItems {
public:
    // `function_namespaces`: the namespace of each function a "namespace" tool offered, named by
    // the function_call items that call it.
    explicit OutputItems(std::map<std::string, std::string> function_namespaces = {}) : namespaces_(std::move(function_namespaces)) {}

    // The stream events this delta makes; the items grow by the same text.
    std::vector<nlohmann::json> add(const tool_calls::MessageDelta& delta);
    // The end of the reply: the open item's closing events, its status "incomplete" when the
    // reply was cut short (max_output_tokens), else "completed".
    std::vector<nlohmann::json> close(bool incomplete);

    const nlohmann::json& output() const { return output_; }
    // All the reasoning text, for counting its tokens.
    const std::string& reasoning_text() const { return reasoning_; }

private:
    enum class Open { None, Reasoning, Message };
    // Continues the open item of kind `kind` with `text`, or closes the open one and starts it.
    void append(Open kind, const std::string& text, std::vector<nlohmann::json>& events);
    void close_open(const char* status, std::vector<nlohmann::json>& events);
    int index() const { return static_cast<int>(output_.size()) - 1; }

    nlohmann::json output_ = nlohmann::json::array();
    Open open_ = Open::None;
    std::string reasoning_;
    std::map<std::string, std::string> namespaces_;
};

}  // namespace strata::server
