#pragma once
// POST /v1/chat/completions and POST /v1/completions: parse and validate the request, build the
// prompt (chat template, tokenizer), check it against the context, queue it on the scheduler and
// answer with one JSON body or an SSE stream. A client that disconnects cancels its generation.
//
//   server.Post("/v1/chat/completions", [&](const auto& req, auto& res) {
//       handle_generation(ctx, Endpoint::Chat, req, res);
//   });

#include <httplib.h>

#include "server/openai_schema.h"
#include "server/server_context.h"

namespace strata::server {

void handle_generation(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req, httplib::Response& res);

// Writes an OpenAI-shaped error body with its status.
void reply_error(httplib::Response& res, const ApiError& e);

}  // namespace strata::server
