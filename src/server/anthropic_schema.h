#pragma once
// The Anthropic Messages API as the server speaks it (POST /v1/messages and
// /v1/messages/count_tokens): request bodies parsed and validated into the GenerationRequest the
// OpenAI chat route builds, with messages and tools in the form the chat templates take (system,
// user, assistant with tool_calls and reasoning_content, tool); errors in Anthropic's shape; and
// the message, usage and count objects of the responses. The content blocks of a reply are built
// by anthropic_blocks.h.
//
//   auto req = parse_messages_request(body, defaults, MessagesEndpoint::Create);
//   if (!req) return reply(anthropic_error(req.error));      // {"type":"error","error":{...}}
//   ... prepare_generation(ctx, std::move(*req.value)) ...
//   body = message_json(make_message_id(), model, blocks.content(), "end_turn", "", usage);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/openai_schema.h"

namespace strata::server {

enum class MessagesEndpoint {
    Create,       // POST /v1/messages: max_tokens required
    CountTokens,  // POST /v1/messages/count_tokens: the prompt only, no generation fields
};

// Any `model` name is accepted and echoed back: Anthropic clients send their own model names, and
// this server serves one model. tool_choice "any" / "tool" force a call (constrained decoding).
ApiResult<GenerationRequest> parse_messages_request(std::string_view body, const SamplingParams& defaults,
                                                    MessagesEndpoint endpoint);

// The prompt and max_tokens against the context, refused in the words of Anthropic's API, which
// its clients read: Claude Code retries with a max_tokens that fits on "input length and
// `max_tokens` exceed context limit: P + N > C", and compacts the conversation on "prompt is too
// long".
std::optional<ApiError> check_messages_context(int64_t n_prompt, int64_t max_tokens, int64_t n_ctx);

// An error as the Anthropic API reports it, from the status and code of the server's ApiError.
struct AnthropicError {
    int http_status = 400;
    std::string type;  // invalid_request_error, authentication_error, not_found_error, ...
    std::string message;
    nlohmann::json to_json() const;  // {"type":"error","error":{"type","message"}}
};
AnthropicError anthropic_error(const ApiError& e);

// "msg_" and "toolu_" identifiers. A tool call's id is derived from the output parser's one
// (deterministic in the request's seed), so a replayed request gets the same ids.
std::string make_message_id();
std::string tool_use_id(std::string_view parser_call_id);

// Anthropic counts a prompt's tokens read from the cache apart from the others: input_tokens +
// cache_read_input_tokens is the whole prompt. The server's KV reuse is its cache.
nlohmann::json messages_usage_json(const Usage& u);
// A whole reply; `stop_sequence` empty: null.
nlohmann::json message_json(const std::string& id, const std::string& model, const nlohmann::json& content,
                            std::string_view stop_reason, const std::string& stop_sequence, const Usage& usage);

}  // namespace strata::server
