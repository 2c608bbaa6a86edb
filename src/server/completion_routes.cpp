#include "server/completion_routes.h"

#include <fmt/format.h>

#include <chrono>

#include "server/chat_output.h"
#include "server/connection.h"
#include "server/sse.h"

namespace strata::server {

using Clock = std::chrono::steady_clock;

void reply_error(httplib::Response& res, const ApiError& e) {
    res.status = e.http_status;
    res.set_content(e.to_json().dump(), "application/json");
}

namespace {

// How long the request thread waits for the engine between checks of the client connection.
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// SSE comments keep proxies and clients from timing out a stream that waits in the queue.
constexpr auto kKeepAliveInterval = std::chrono::seconds(10);

// A prepared request: the parsed fields, the prompt tokens and what the parser needs.
struct Prepared {
    GenerationRequest request;
    std::string rendered_prompt;  // chat: the template's output (the parser checks its end)
    TaskSpec spec;
};

ApiResult<Prepared> prepare(ServerContext& ctx, Endpoint endpoint, std::string_view body) {
    const Engine& lm = ctx.model();
    const Tokenizer& tok = *lm.tokenizer;
    auto parsed = endpoint == Endpoint::Chat ? parse_chat_request(body, ctx.options.default_sampling, ctx.options.model_id)
                                             : parse_completion_request(body, ctx.options.default_sampling, ctx.options.model_id);
    if (!parsed) return parsed.error;
    Prepared p;
    p.request = std::move(*parsed.value);
    GenerationRequest& r = p.request;
    if (endpoint == Endpoint::Chat) {
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
        p.rendered_prompt = std::move(*rendered);
        p.spec.prompt = lm.tokenize_chat(p.rendered_prompt);
        // Harmony (gpt-oss) writes its channel markers as control tokens; the parser needs them.
        p.spec.render_special = ctx.chat_format() == tool_calls::ChatFormat::GptOss;
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
    const int64_t n_ctx = ctx.scheduler().options().n_ctx;
    if (auto e = check_context_budget(static_cast<int64_t>(p.spec.prompt.size()), r.max_tokens, n_ctx, p.spec.max_tokens)) return *e;
    p.spec.sampling = r.sampling;
    p.spec.stop = r.stop;
    p.spec.ignore_eos = r.ignore_eos;
    p.spec.deadline = Clock::now() + ctx.options.timeout;
    return p;
}

ApiError error_for(const TaskResult& r) {
    if (r.outcome == TaskOutcome::TimedOut) return ApiError{504, r.error, "timeout_error", "timeout", ""};
    if (r.outcome == TaskOutcome::Cancelled) return ApiError{503, "the request was cancelled: " + r.error, "server_error", "cancelled", ""};
    return ApiError{500, "generation failed: " + r.error, "server_error", "engine_error", ""};
}

Usage usage_of(const TaskResult& r) {
    return Usage{r.prompt_tokens, r.generated_tokens, r.cached_tokens, r.prompt_seconds, r.generation_seconds};
}

std::string_view finish_reason_of(const TaskResult& r, bool tool_calls) {
    if (tool_calls) return "tool_calls";
    return r.outcome == TaskOutcome::Length ? "length" : "stop";
}

bool succeeded(const TaskResult& r) { return r.outcome == TaskOutcome::Stop || r.outcome == TaskOutcome::Length; }

// Everything a streamed or non-streamed answer is built from, shared with the stream's provider.
struct Generation {
    Prepared prepared;
    std::shared_ptr<TaskHandle> task;
    std::optional<ChatOutputParser> parser;  // chat only
    ResponseMeta meta;
    int socket = -1;
    ~Generation() {
        if (task) task->cancel();  // harmless once done; stops it when the response was dropped
    }
};

// True at most once per kPollInterval when the client has hung up (events can arrive without
// pause, so the check cannot wait for a quiet moment).
bool client_left(Generation& g, Clock::time_point& last_check) {
    const auto now = Clock::now();
    if (now - last_check < kPollInterval) return false;
    last_check = now;
    return peer_closed(g.socket);
}

void answer_whole(Generation& g, httplib::Response& res) {
    std::string text;
    TaskResult result;
    auto last_check = Clock::now();
    while (true) {
        if (client_left(g, last_check)) g.task->cancel();
        std::optional<TaskEvent> ev = g.task->next(kPollInterval);
        if (!ev) continue;
        if (ev->kind == TaskEvent::Kind::Done) {
            result = std::move(ev->result);
            break;
        }
        if (g.parser) g.parser->feed(ev->text);
        else text += ev->text;
    }
    if (!succeeded(result)) return reply_error(res, error_for(result));
    const Usage usage = usage_of(result);
    nlohmann::json body;
    if (g.parser) {
        g.parser->finish();
        body = chat_response(g.meta, g.parser->message(), finish_reason_of(result, g.parser->has_tool_calls()), usage);
    } else {
        body = completion_response(g.meta, text, finish_reason_of(result, false), usage);
    }
    res.status = 200;
    res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

// Writes the whole SSE stream; false when the client went away.
bool stream_events(Generation& g, httplib::DataSink& sink) {
    const Endpoint endpoint = g.prepared.request.endpoint;
    auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
    if (endpoint == Endpoint::Chat && !write(sse_event(chat_chunk(g.meta, {{"role", "assistant"}, {"content", ""}}, "")))) return false;
    auto last_write = Clock::now();
    auto last_check = last_write;
    while (true) {
        if (client_left(g, last_check)) return false;
        std::optional<TaskEvent> ev = g.task->next(kPollInterval);
        if (!ev) {
            if (Clock::now() - last_write > kKeepAliveInterval) {
                if (!write(sse_comment("keep-alive"))) return false;
                last_write = Clock::now();
            }
            continue;
        }
        if (ev->kind == TaskEvent::Kind::Text) {
            nlohmann::json chunk;
            if (g.parser) {
                nlohmann::json delta = g.parser->feed(ev->text);
                if (delta.is_null()) continue;
                chunk = chat_chunk(g.meta, delta, "");
            } else {
                chunk = completion_chunk(g.meta, ev->text, "");
            }
            if (!write(sse_event(chunk))) return false;
            last_write = Clock::now();
            continue;
        }
        const TaskResult& result = ev->result;
        if (!succeeded(result)) {
            // The status line went out with the first byte; an error event is what is left.
            write(sse_event(error_for(result).to_json()));
            write(sse_done());
            return true;
        }
        if (g.parser) {
            nlohmann::json last = g.parser->finish();
            if (!last.is_null() && !write(sse_event(chat_chunk(g.meta, last, "")))) return false;
            const auto finish = finish_reason_of(result, g.parser->has_tool_calls());
            if (!write(sse_event(chat_chunk(g.meta, nlohmann::json::object(), finish)))) return false;
        } else if (!write(sse_event(completion_chunk(g.meta, "", finish_reason_of(result, false))))) {
            return false;
        }
        if (g.prepared.request.include_usage && !write(sse_event(usage_chunk(g.meta, endpoint, usage_of(result))))) return false;
        return write(sse_done());
    }
}

}  // namespace

void handle_generation(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
    if (ctx.state() != ModelState::Ready) {
        const bool failed = ctx.state() == ModelState::Failed;
        return reply_error(res, ApiError{503, failed ? "the model failed to load: " + ctx.error() : "the model is still loading: retry shortly",
                                         "server_error", failed ? "model_load_failed" : "model_loading", ""});
    }
    auto prepared = prepare(ctx, endpoint, req.body);
    if (!prepared) return reply_error(res, prepared.error);

    auto g = std::make_shared<Generation>();
    g->prepared = std::move(*prepared.value);
    const GenerationRequest& r = g->prepared.request;
    g->task = ctx.draining() ? nullptr : ctx.scheduler().submit(g->prepared.spec);
    if (!g->task) {
        const bool draining = ctx.draining();
        if (!draining) ctx.metrics.count_rejected();
        res.set_header("Retry-After", draining ? "30" : "1");
        return reply_error(res, ApiError{503,
                                         draining ? "the server is shutting down: retry on another instance or after it restarts"
                                                  : fmt::format("the server is busy: all {} slots are in use and the queue of {} is full; retry shortly",
                                                                ctx.scheduler().options().n_slots, ctx.scheduler().options().max_queue),
                                         "server_error", draining ? "shutting_down" : "server_overloaded", ""});
    }
    g->meta = make_response_meta(endpoint, r.model.empty() ? ctx.options.model_id : r.model);
    g->socket = find_request_socket(req);
    if (endpoint == Endpoint::Chat) g->parser.emplace(ctx.chat_format(), g->prepared.rendered_prompt, r.tools, r.sampling.seed);

    if (!r.stream) return answer_whole(*g, res);
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");  // reverse proxies must not buffer the stream
    res.set_chunked_content_provider("text/event-stream", [g](size_t, httplib::DataSink& sink) {
        if (!stream_events(*g, sink)) {
            g->task->cancel();
            return false;
        }
        sink.done();
        return true;
    });
}

}  // namespace strata::server
