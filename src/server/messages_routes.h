#pragma once
// POST /v1/messages and POST /v1/messages/count_tokens, the Anthropic Messages API: the request
// parsed by anthropic_schema, its prompt built and queued as the OpenAI chat route's
// (generation.h), the model's output split by the same parser (chat_output.h) into thinking,
// text and tool_use blocks (anthropic_blocks.h), answered as one message or as Anthropic's event
// stream. Every error, from the request to the engine, is in Anthropic's shape.
//
//   server.Post("/v1/messages", [&](const auto& req, auto& res) { handle_messages(ctx, req, res); });
//   server.Post("/v1/messages/count_tokens", [&](const auto& req, auto& res) { handle_count_tokens(ctx, req, res); });

#include <httplib.h>

#include <string_view>

#include "server/openai_schema.h"
#include "server/server_context.h"

namespace strata::server {

void handle_messages(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
void handle_count_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

// The paths whose errors (authentication, unknown routes, oversized bodies included) are in
// Anthropic's shape: /v1/messages and below.
bool is_anthropic_path(std::string_view path);
void reply_anthropic_error(httplib::Response& res, const ApiError& e);

}  // namespace strata::server
