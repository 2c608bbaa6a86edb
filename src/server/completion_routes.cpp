#include "server/completion_routes.h"

#include <memory>
#include <optional>

#include "server/chat_output.h"
#include "server/generation.h"
#include "server/sse.h"

namespace strata::server {

void reply_error(httplib::Response& res, const ApiError& e) {
    res.status = e.http_status;
    res.set_content(e.to_json().dump(), "application/json");
}

namespace {

std::string_view finish_reason_of(const TaskResult& r, bool tool_calls) {
    if (tool_calls) return "tool_calls";
    return r.outcome == TaskOutcome::Length ? "length" : "stop";
}

// An OpenAI answer: the generation, the chat output parser (chat only) and what every chunk repeats.
struct Answer {
    std::shared_ptr<Generation> generation;
    std::optional<ChatOutputParser> parser;
    ResponseMeta meta;
};

void answer_whole(Answer& a, httplib::Response& res) {
    Generation& g = *a.generation;
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
        if (a.parser) a.parser->feed(ev->text);
        else text += ev->text;
    }
    if (!succeeded(result)) return reply_error(res, error_for(result));
    const Usage usage = usage_of(result);
    nlohmann::json body;
    if (a.parser) {
        a.parser->finish();
        body = chat_response(a.meta, a.parser->message(), finish_reason_of(result, a.parser->has_tool_calls()), usage);
    } else {
        body = completion_response(a.meta, text, finish_reason_of(result, false), usage);
    }
    res.status = 200;
    res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

// Writes the whole SSE stream; false when the client went away.
bool stream_events(Answer& a, httplib::DataSink& sink) {
    Generation& g = *a.generation;
    const Endpoint endpoint = g.prepared.request.endpoint;
    auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
    if (endpoint == Endpoint::Chat && !write(sse_event(chat_chunk(a.meta, {{"role", "assistant"}, {"content", ""}}, "")))) return false;
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
            if (a.parser) {
                nlohmann::json delta = a.parser->feed(ev->text);
                if (delta.is_null()) continue;
                chunk = chat_chunk(a.meta, delta, "");
            } else {
                chunk = completion_chunk(a.meta, ev->text, "");
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
        if (a.parser) {
            nlohmann::json last = a.parser->finish();
            if (!last.is_null() && !write(sse_event(chat_chunk(a.meta, last, "")))) return false;
            const auto finish = finish_reason_of(result, a.parser->has_tool_calls());
            if (!write(sse_event(chat_chunk(a.meta, nlohmann::json::object(), finish)))) return false;
        } else if (!write(sse_event(completion_chunk(a.meta, "", finish_reason_of(result, false))))) {
            return false;
        }
        if (g.prepared.request.include_usage && !write(sse_event(usage_chunk(a.meta, endpoint, usage_of(result))))) return false;
        return write(sse_done());
    }
}

}  // namespace

void handle_generation(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
    if (auto e = check_serving(ctx)) return reply_error(res, *e);
    auto parsed = endpoint == Endpoint::Chat ? parse_chat_request(req.body, ctx.options.default_sampling, ctx.model_name_rule())
                                             : parse_completion_request(req.body, ctx.options.default_sampling, ctx.model_name_rule());
    if (!parsed) return reply_error(res, parsed.error);
    auto prepared = prepare_generation(ctx, std::move(*parsed.value));
    if (!prepared) return reply_error(res, prepared.error);
    auto started = start_generation(ctx, std::move(*prepared.value), req, res);
    if (!started) return reply_error(res, started.error);

    auto a = std::make_shared<Answer>();
    a->generation = std::move(*started.value);
    const GenerationRequest& r = a->generation->prepared.request;
    a->meta = make_response_meta(endpoint, r.model.empty() ? ctx.options.model_id : r.model);
    if (endpoint == Endpoint::Chat) a->parser.emplace(a->generation->prepared.output_format, a->generation->prepared.rendered_prompt, r.tools, r.sampling.seed);

    if (!r.stream) return answer_whole(*a, res);
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");  // reverse proxies must not buffer the stream
    res.set_chunked_content_provider("text/event-stream", [a](size_t, httplib::DataSink& sink) {
        if (!stream_events(*a, sink)) {
            a->generation->task->cancel();
            return false;
        }
        sink.done();
        return true;
    });
}

}  // namespace strata::server
