#pragma once
// Server-sent events as the OpenAI streaming API frames them: one `data: <json>\n\n` event per
// chunk, `data: [DONE]\n\n` at the end, and `: comment` lines as keep-alives while a request
// waits in the queue; and as Anthropic's does: each event named by an `event:` line (its JSON's
// "type" again), no [DONE]. The parsers are the client side, used by the tests and usable by tools.
//
//   sink.write(sse_event(chunk_json));
//   sink.write(sse_done());
//   sink.write(sse_named_event(message_start_json));  // event: message_start
//   auto events = parse_sse(body);   // {"{...}", "{...}", "[DONE]"}

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::server {

std::string sse_event(const nlohmann::json& data);
std::string sse_done();
std::string sse_comment(std::string_view text);
// `event: <data["type"]>` then the data line.
std::string sse_named_event(const nlohmann::json& data);

// Splits a complete event stream into the data payloads of its events, in order. Comment lines
// are skipped; multi-line data fields are joined with '\n' (the SSE rule). Returns nullopt when
// the text does not end at an event boundary (a truncated stream).
std::optional<std::vector<std::string>> parse_sse(std::string_view stream);

// The same with each event's name (empty when it had no `event:` line).
struct SseEvent {
    std::string name;
    std::string data;
};
std::optional<std::vector<SseEvent>> parse_sse_events(std::string_view stream);

}  // namespace strata::server
