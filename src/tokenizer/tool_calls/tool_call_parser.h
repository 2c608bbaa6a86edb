#pragma once
// Turns what a model generates back into an OpenAI chat message — content, reasoning_content and
// tool_calls — while it streams. Text is fed as it is decoded; each feed returns what can be sent
// to the client now. Text that might still turn into a marker ("<tool_" of "<tool_call>", or half
// a UTF-8 character) is held back until it is decided, so no delta ever carries a partial marker
// and nothing sent is ever retracted: the final message is exactly the concatenation of deltas.
//
//   ToolCallParser parser({.format = detect_chat_format(template_source),
//                          .thinking_forced_open = prompt_opens_thinking(format, prompt),
//                          .tools = request["tools"], .id_seed = request_seed});
//   for (std::string_view piece : decoded_pieces) send(parser.feed(piece));
//   ToolCallParser::Finished done = parser.finish();   // send(done.delta); done.message is final
//
// Tool calls are emitted whole: one ToolCallDelta with id, name and the complete arguments, at the
// moment the call's closing marker (or the end of its JSON) arrives. Waiting costs the client
// nothing it could act on (a call cannot run before its arguments are complete) and means a call
// is only ever sent once its arguments were validated — a malformed call is never half-sent.
//
// Malformed calls (broken JSON, no function name, …): the block's raw text, markers included, is
// returned as content, and `problems` says what was wrong. The client then sees what the model
// wrote instead of a fabricated call, and finish_reason stays "stop". Parsing never throws.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tool_calls/call_bodies.h"
#include "tokenizer/tool_calls/chat_format.h"
#include "tokenizer/tool_calls/text_scan.h"

namespace strata::tool_calls {

struct ToolCallDelta {
    int index = 0;          // position of the call in the message's tool_calls
    std::string id;         // set on the call's first (here: only) delta
    std::string name;
    std::string arguments;  // a fragment of the JSON arguments string (here: all of it)
};

struct MessageDelta {
    std::string content;
    std::string reasoning_content;
    std::vector<ToolCallDelta> tool_calls;
    bool empty() const { return content.empty() && reasoning_content.empty() && tool_calls.empty(); }
};

struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  // a JSON object, serialized
};

struct ParsedMessage {
    std::string content;
    std::string reasoning_content;
    std::vector<ToolCall> tool_calls;
    std::vector<std::string> problems;  // malformed calls and values, for the server's log
};

struct ParserOptions {
    ChatFormat format = ChatFormat::Generic;
    // The prompt already opened the reasoning block (prompt_opens_thinking): the output starts
    // inside it and only its closing marker appears.
    bool thinking_forced_open = false;
    // false: reasoning stays in content with its markers as the model wrote them (gpt-oss's
    // analysis channel is wrapped in <think>…</think>, the tags clients look for), as
    // llama.cpp's reasoning_format=none does.
    bool split_reasoning = true;
    // false: call markers are ordinary content (the request had no tools).
    bool parse_tool_calls = true;
    // The request's OpenAI `tools`; XML-style families convert parameter values by their types.
    nlohmann::ordered_json tools;
    // Tool call ids are derived from this seed and the call's index (make_tool_call_id).
    uint64_t id_seed = 0;
};

// "call_" + 24 alphanumerics, or 9 alphanumerics for Mistral, whose templates reject other ids;
// deterministic in (seed, index) so a request replayed with the same seed gets the same ids.
std::string make_tool_call_id(bool short_alnum, uint64_t seed, size_t index);

class ToolCallParser {
public:
    explicit ToolCallParser(ParserOptions options);

    // Adds generated text; returns what became final.
    MessageDelta feed(std::string_view text);

    struct Finished {
        MessageDelta delta;     // what the end of the output released (held text, a last call)
        ParsedMessage message;  // the whole message: the concatenation of every delta
    };
    // The output ended (stop token, stop string or length). Further feeds are ignored.
    Finished finish();

    // The whole output at once.
    static ParsedMessage parse(std::string_view text, ParserOptions options);

private:
    enum class State { Start, Reasoning, Content, Block, AfterJsonCall, HarmonyHeader, HarmonyBody };
    enum class Channel { Reasoning, Content, Call };

    bool step(bool at_end);
    bool step_start(bool at_end, bool after_call);
    bool step_reasoning(bool at_end);
    bool step_content(bool at_end);
    bool step_block(bool at_end);
    bool step_harmony_header(bool at_end);
    bool step_harmony_body(bool at_end);

    void begin_block(const CallSyntax* call, std::string_view open_text);
    void finish_block(bool closed, bool invalid);
    void add_calls(BodyParse& parsed, std::string_view raw_text);
    void enter_reasoning(std::string_view open_marker);
    void emit_content(std::string_view text);
    void emit_reasoning(std::string_view text);
    void consume(size_t n) { pending_.erase(0, n); }
    MessageDelta take_delta();

    ParserOptions options_;
    const FormatSyntax& syntax_;
    ToolSchemas schemas_;
    // Markers searched in content: call openers, then group markers (call_for_marker_ is null).
    std::vector<std::string_view> content_markers_;
    std::vector<const CallSyntax*> call_for_marker_;

    State state_ = State::Start;
    std::string pending_;  // fed text not yet decided
    TrimmedStream content_stream_;
    TrimmedStream reasoning_stream_;
    MessageDelta delta_;   // built during one feed
    ParsedMessage message_;
    bool finished_ = false;

    // The call block being read.
    const CallSyntax* call_ = nullptr;
    std::string block_open_;  // the opening marker as written (returned as content if malformed)
    std::string body_;
    size_t body_scanned_ = 0;  // the closing marker cannot start before this offset of body_
    size_t json_begin_ = kNpos;
    size_t json_fed_ = 0;
    JsonExtent json_;

    // gpt-oss: what the current channel's body is, and the called function.
    Channel channel_ = Channel::Content;
    std::string harmony_call_name_;
};

}  // namespace strata::tool_calls
