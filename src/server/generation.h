#pragma once
// A generation's way through the server, shared by the OpenAI routes (completion_routes) and the
// Anthropic one (messages_routes): the prompt built from a parsed request (chat template,
// tokenizer) and checked against the context, the task queued on the scheduler, and what the
// routes need while they wait for its events (the client's connection, the outcome's error and
// usage). Errors come back as ApiError values; each route writes them in its own API's shape.
//
//   if (auto e = check_serving(ctx)) return reply(*e);
//   auto prepared = prepare_generation(ctx, std::move(request));
//   auto g = start_generation(ctx, std::move(*prepared.value), req, res);   // res: Retry-After on refusal
//   while (auto ev = g.value->task->next(kPollInterval)) { ... client_left(*g.value, last_check) ... }

#include <httplib.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/openai_schema.h"
#include "server/server_context.h"

namespace strata::server {

using Clock = std::chrono::steady_clock;

// How long a request thread waits for the engine between checks of the client connection.
inline constexpr auto kPollInterval = std::chrono::milliseconds(50);
// A stream that waits in the queue sends something this often, so that proxies and clients do
// not time it out.
inline constexpr auto kKeepAliveInterval = std::chrono::seconds(10);

// 503 while the model is loading or after it failed to load; nullopt when requests can be served.
std::optional<ApiError> check_serving(const ServerContext& ctx);

// A chat request's messages (and tools) through the model's chat template and tokenizer; with
// `find_turn_starts`, also where its messages start (server/turn_starts.h: the messages rendered
// a second time, without the generation prompt), for the scheduler's turn checkpoints.
struct ChatPrompt {
    std::string rendered;
    std::vector<int32_t> tokens;
    std::vector<int64_t> turn_starts;
};
ApiResult<ChatPrompt> render_chat_prompt(const ServerContext& ctx, const GenerationRequest& request,
                                         bool find_turn_starts = false);

// A request ready to queue: the parsed fields, the prompt tokens and what the output parser needs.
struct Prepared {
    GenerationRequest request;
    std::string rendered_prompt;  // chat: the template's output (the parser checks its end)
    TaskSpec spec;
    // The syntax the output parser reads: the model's, or the one a forced call is written in
    // (server/constrained_output.h).
    tool_calls::ChatFormat output_format = tool_calls::ChatFormat::Generic;
};
ApiResult<Prepared> prepare_generation(const ServerContext& ctx, GenerationRequest request);
// Its two halves, for a route that words the context check its own way: the prompt built (the
// spec's prompt and render flag set), then the context check and the rest of the task's settings.
// fit_to_context also compiles the request's output constraint (apply_output_constraint).
ApiResult<Prepared> prepare_prompt(const ServerContext& ctx, GenerationRequest request);
std::optional<ApiError> fit_to_context(const ServerContext& ctx, Prepared& p);
// Sets p.spec.grammar and p.output_format from p.request.constraint (a 400 when the schema, the
// grammar or the forced call cannot be compiled). Routes that build their TaskSpec without
// fit_to_context (e.g. /v1/responses) call it after setting request.constraint.
std::optional<ApiError> apply_output_constraint(const ServerContext& ctx, Prepared& p);

// A queued or running task with what its answer is built from.
struct Generation {
    Prepared prepared;
    std::shared_ptr<TaskHandle> task;
    int socket = -1;  // the client's connection (-1: unknown, never reported closed)
    ~Generation() {
        if (task) task->cancel();  // harmless once done; stops it when the response was dropped
    }
};

// Queues the task; a 503 (queue full, or the server draining) when it cannot, with the
// Retry-After header set on `res`.
ApiResult<std::shared_ptr<Generation>> start_generation(ServerContext& ctx, Prepared prepared, const httplib::Request& req,
                                                         httplib::Response& res);

// True at most once per kPollInterval when the client has hung up (events can arrive without
// pause, so the check cannot wait for a quiet moment).
bool client_left(const Generation& g, Clock::time_point& last_check);

// Stop and Length are answers; the other outcomes are errors.
bool succeeded(const TaskResult& r);
ApiError error_for(const TaskResult& r);
Usage usage_of(const TaskResult& r);

}  // namespace strata::server
