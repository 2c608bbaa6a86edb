#pragma once
// The OpenAI Responses API: POST /v1/responses (a whole response object, or the typed event
// stream with sequence numbers), GET and DELETE /v1/responses/{id} for the stored ones, and
// POST /v1/responses/input_tokens. The request is parsed by responses_schema, continues a stored
// conversation when it names previous_response_id (responses_store), and runs as the chat route's
// does (generation.h); the model's output is split by the same parser (chat_output.h) into
// reasoning, message and function_call items (responses_items.h). Errors are OpenAI's shape.
//
//   server.Post("/v1/responses", [&](const auto& req, auto& res) { handle_responses_create(ctx, req, res); });
//   server.Get(R"(/v1/responses/([^/]+))", [&](const auto& req, auto& res) { handle_responses_get(ctx, req, res); });

#include <httplib.h>

#include "server/server_context.h"

namespace strata::server {

void handle_responses_create(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
void handle_responses_input_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
// The id is the route's first match.
void handle_responses_get(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
void handle_responses_delete(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace strata::server
