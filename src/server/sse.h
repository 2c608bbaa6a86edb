#pragma once
// Server-sent events as the OpenAI streaming API frames them: one `data: <json>\n\n` event per
// chunk, `data: [DONE]\n\n` at the end, and `: comment` lines as keep-alives while a request
// waits in the queue. The parser is the client side, used by the tests and usable by tools.
//
//   sink.write(sse_event(chunk_json));
//   sink.write(sse_done());
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

// Splits a complete event stream into the data payloads of its events, in order. Comment lines
// are skipped; multi-line data fields are joined with '\n' (the SSE rule). Returns nullopt when
// the text does not end at an event boundary (a truncated stream).
std::optional<std::vector<std::string>> parse_sse(std::string_view stream);

}  // namespace strata::server
