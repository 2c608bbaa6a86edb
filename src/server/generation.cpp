#include "server/generation.h"

#include <fmt/format.h>

#include "server/connection.h"
#include "server/constrained_output.h"
#include "server/speculative_request.h"
#include "server/turn_starts.h"

namespace strata::server {

namespace {
// Turn starts a prompt keeps checkpoints at (turn_starts.h says which): enough for the turns a
// next request can diverge in, few enough that a long conversation read cold is not copied at
// every message.
constexpr size_t kTurnCheckpointsPerPrompt = 8;
}  // namespace

std::optional<ApiError> check_serving(const ServerContext& ctx) {
    switch (ctx.state()) {
        case ModelState::Ready: return std::nullopt;
        case ModelState::Failed:
            return ApiError{503, "the model failed to load: " + ctx.error(), "server_error", "model_load_failed", ""};
        case ModelState::Loading: break;
    }
    return ApiError{503, "the model is still loading: retry shortly", "server_error", "model_loading", ""};
}

ApiResult<ChatPrompt> render_chat_prompt(const ServerContext& ctx, const GenerationRequest& r, bool find_turn_starts) {
    const Engine& lm = ctx.model();
    if (!lm.chat_template) {
        return ApiError{400, "this model has no chat template: use /v1/completions, or restart the server with --chat-template FILE",
                        "invalid_request_error", "no_chat_template", "messages"};
    }
    nlohmann::ordered_json extra = r.template_kwargs;
    if (!r.tools.is_null()) extra["tools"] = r.tools;
    auto rendered = lm.render_chat(r.messages, /*add_generation_prompt=*/true, extra);
    if (!rendered) {
        return ApiError{400, fmt::format("the chat template could not render these messages: {}", rendered.status().message()),
                        "invalid_request_error", "template_error", "messages"};
    }
    ChatPrompt p;
    p.rendered = std::move(*rendered);
    p.tokens = lm.tokenize_chat(p.rendered);
    if (find_turn_starts) {
        // A template that cannot render the messages without a generation prompt only costs the
        // checkpoints at turn starts; the reply's end is still kept.
        if (auto history = lm.render_chat(r.messages, /*add_generation_prompt=*/false, extra)) {
            const Tokenizer& tok = *lm.tokenizer;
            p.turn_starts = turn_starts(p.tokens, lm.tokenize_chat(*history), [&](int32_t t) { return tok.is_control(t); },
                                        kTurnCheckpointsPerPrompt);
        }
    }
    return p;
}

ApiResult<Prepared> prepare_generation(const ServerContext& ctx, GenerationRequest request) {
    auto p = prepare_prompt(ctx, std::move(request));
    if (!p) return p;
    if (auto e = fit_to_context(ctx, *p.value)) return *e;
    return p;
}

ApiResult<Prepared> prepare_prompt(const ServerContext& ctx, GenerationRequest request) {
    const Tokenizer& tok = *ctx.model().tokenizer;
    Prepared p;
    p.request = std::move(request);
    GenerationRequest& r = p.request;
    if (r.endpoint == Endpoint::Chat) {
        auto prompt = render_chat_prompt(ctx, r, ctx.scheduler().takes_checkpoints());
        if (!prompt) return prompt.error;
        p.rendered_prompt = std::move(prompt.value->rendered);
        p.spec.prompt = std::move(prompt.value->tokens);
        p.spec.checkpoints = std::move(prompt.value->turn_starts);
        // Harmony (gpt-oss) writes its channel markers as control tokens; the parser needs them.
        p.spec.render_special = ctx.chat_format() == tool_calls::ChatFormat::GptOss;
        p.output_format = ctx.chat_format();
    } else if (r.prompt_is_tokens) {
        for (int32_t id : r.prompt_tokens) {
            if (static_cast<size_t>(id) >= tok.vocab_size()) {
                return ApiError::invalid("prompt", fmt::format("prompt: token id {} is outside the vocabulary of {} tokens", id, tok.vocab_size()));
            }
        }
        p.spec.prompt = r.prompt_tokens;
    } else {
        p.spec.prompt = tok.encode(r.prompt_text, tok.wants_bos(), /*parse_special=*/false);
    }
    if (p.spec.prompt.empty()) return ApiError::invalid("prompt", "the prompt is empty after tokenization");
    return p;
}

std::optional<ApiError> fit_to_context(const ServerContext& ctx, Prepared& p) {
    const GenerationRequest& r = p.request;
    const int64_t n_ctx = ctx.scheduler().options().n_ctx;
    if (auto e = check_context_budget(static_cast<int64_t>(p.spec.prompt.size()), r.max_tokens, n_ctx, p.spec.max_tokens)) return e;
    p.spec.sampling = r.sampling;
    p.spec.stop = r.stop;
    p.spec.ignore_eos = r.ignore_eos;
    p.spec.speculation = resolve_speculative(r.speculative, ctx.scheduler().options().speculation);
    p.spec.deadline = Clock::now() + ctx.options.timeout;
    return apply_output_constraint(ctx, p);
}

std::optional<ApiError> apply_output_constraint(const ServerContext& ctx, Prepared& p) {
    const OutputConstraint& c = p.request.constraint;
    const bool thinking_open = tool_calls::prompt_opens_thinking(ctx.chat_format(), p.rendered_prompt);
    auto grammar = compile_output_constraint(c, ctx.chat_format(), p.request.tools, thinking_open);
    if (!grammar) return grammar.error;
    p.spec.grammar = std::move(*grammar.value);
    if (c.kind == OutputConstraint::Kind::ToolCall) p.output_format = forced_call_format(ctx.chat_format());
    return std::nullopt;
}

ApiResult<std::shared_ptr<Generation>> start_generation(ServerContext& ctx, Prepared prepared, const httplib::Request& req,
                                                         httplib::Response& res) {
    auto g = std::make_shared<Generation>();
    g->prepared = std::move(prepared);
    g->task = ctx.draining() ? nullptr : ctx.scheduler().submit(g->prepared.spec);
    if (!g->task) {
        const bool draining = ctx.draining();
        if (!draining) ctx.metrics.count_rejected();
        res.set_header("Retry-After", draining ? "30" : "1");
        return ApiError{503,
                        draining ? "the server is shutting down: retry on another instance or after it restarts"
                                 : fmt::format("the server is busy: all {} slots are in use and the queue of {} is full; retry shortly",
                                               ctx.scheduler().options().n_slots, ctx.scheduler().options().max_queue),
                        "server_error", draining ? "shutting_down" : "server_overloaded", ""};
    }
    g->socket = find_request_socket(req);
    return g;
}

bool client_left(const Generation& g, Clock::time_point& last_check) {
    const auto now = Clock::now();
    if (now - last_check < kPollInterval) return false;
    last_check = now;
    return peer_closed(g.socket);
}

bool succeeded(const TaskResult& r) { return r.outcome == TaskOutcome::Stop || r.outcome == TaskOutcome::Length; }

ApiError error_for(const TaskResult& r) {
    if (r.outcome == TaskOutcome::TimedOut) return ApiError{504, r.error, "timeout_error", "timeout", ""};
    if (r.outcome == TaskOutcome::Cancelled) return ApiError{503, "the request was cancelled: " + r.error, "server_error", "cancelled", ""};
    return ApiError{500, "generation failed: " + r.error, "server_error", "engine_error", ""};
}

Usage usage_of(const TaskResult& r) {
    return Usage{r.prompt_tokens, r.generated_tokens, r.cached_tokens, r.prompt_seconds, r.generation_seconds};
}

}  // namespace strata::server
