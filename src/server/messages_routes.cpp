#include "server/messages_routes.h"

#include <memory>
#include <optional>
#include <vector>

#include "server/anthropic_blocks.h"
#include "server/anthropic_schema.h"
#include "server/chat_output.h"
#include "server/generation.h"
#include "server/sse.h"

namespace strata::server {

using json = nlohmann::json;

bool is_anthropic_path(std::string_view path) {
    constexpr std::string_view kBase = "/v1/messages";
    return path.substr(0, kBase.size()) == kBase && (path.size() == kBase.size() || path[kBase.size()] == '/');
}

void reply_anthropic_error(httplib::Response& res, const ApiError& e) {
    const AnthropicError a = anthropic_error(e);
    res.status = a.http_status;
    res.set_content(a.to_json().dump(), "application/json");
}

namespace {

// A reply in the making: the generation, the output parser and the blocks it feeds.
struct Reply {
    std::shared_ptr<Generation> generation;
    std::optional<ChatOutputParser> parser;
    MessageBlocks blocks;
    std::string id;     // "msg_..."
    std::string model;  // the name the client asked for
};

std::string_view stop_reason_of(const TaskResult& r, bool tool_use) {
    if (tool_use) return "tool_use";
    if (r.outcome == TaskOutcome::Length) return "max_tokens";
    return r.stop_string.empty() ? "end_turn" : "stop_sequence";
}

std::vector<json> feed(Reply& a, std::string_view text) { return a.blocks.add(a.parser->feed_delta(text)); }

std::vector<json> finish(Reply& a) {
    std::vector<json> events = a.blocks.add(a.parser->finish_delta());
    for (auto& e : a.blocks.close()) events.push_back(std::move(e));
    return events;
}

void answer_whole(Reply& a, httplib::Response& res) {
    Generation& g = *a.generation;
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
        feed(a, ev->text);
    }
    if (!succeeded(result)) return reply_anthropic_error(res, error_for(result));
    finish(a);
    const json body = message_json(a.id, a.model, a.blocks.content(), stop_reason_of(result, a.blocks.has_tool_use()),
                                   result.stop_string, usage_of(result));
    res.status = 200;
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// Writes the whole event stream; false when the client went away.
bool stream_events(Reply& a, httplib::DataSink& sink) {
    Generation& g = *a.generation;
    auto write = [&](const json& event) {
        const std::string s = sse_named_event(event);
        return sink.write(s.data(), s.size());
    };
    // The prompt's size is known now; how much of it the KV cache held is known at the end, and
    // message_delta's usage gives the final split (Anthropic's clients take its counts).
    Usage at_start;
    at_start.prompt_tokens = static_cast<int64_t>(g.prepared.spec.prompt.size());
    if (!write({{"type", "message_start"}, {"message", message_json(a.id, a.model, json::array(), "", "", at_start)}})) return false;
    if (!write({{"type", "ping"}})) return false;
    auto last_write = Clock::now();
    auto last_check = last_write;
    while (true) {
        if (client_left(g, last_check)) return false;
        std::optional<TaskEvent> ev = g.task->next(kPollInterval);
        if (!ev) {
            // Anthropic's keep-alive is a ping event (its clients skip it).
            if (Clock::now() - last_write > kKeepAliveInterval) {
                if (!write({{"type", "ping"}})) return false;
                last_write = Clock::now();
            }
            continue;
        }
        if (ev->kind == TaskEvent::Kind::Text) {
            for (const json& e : feed(a, ev->text)) {
                if (!write(e)) return false;
                last_write = Clock::now();
            }
            continue;
        }
        const TaskResult& result = ev->result;
        if (!succeeded(result)) {
            // The status line went out with the first byte; an error event is what is left.
            write(anthropic_error(error_for(result)).to_json());
            return true;
        }
        for (const json& e : finish(a)) {
            if (!write(e)) return false;
        }
        const std::string_view stop_reason = stop_reason_of(result, a.blocks.has_tool_use());
        const json stop_sequence = result.stop_string.empty() ? json(nullptr) : json(result.stop_string);
        if (!write({{"type", "message_delta"},
                    {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", stop_sequence}}},
                    {"usage", messages_usage_json(usage_of(result))}})) {
            return false;
        }
        return write({{"type", "message_stop"}});
    }
}

}  // namespace

void handle_messages(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    if (auto e = check_serving(ctx)) return reply_anthropic_error(res, *e);
    auto parsed = parse_messages_request(req.body, ctx.options.default_sampling, MessagesEndpoint::Create);
    if (!parsed) return reply_anthropic_error(res, parsed.error);
    if (auto e = check_model_name(parsed.value->model, ctx.model_name_rule())) return reply_anthropic_error(res, *e);
    auto prepared = prepare_prompt(ctx, std::move(*parsed.value));
    if (!prepared) return reply_anthropic_error(res, prepared.error);
    // max_tokens is required here, so the check below is the one that applies.
    if (auto e = check_messages_context(static_cast<int64_t>(prepared.value->spec.prompt.size()),
                                        prepared.value->request.max_tokens.value_or(1), ctx.scheduler().options().n_ctx)) {
        return reply_anthropic_error(res, *e);
    }
    if (auto e = fit_to_context(ctx, *prepared.value)) return reply_anthropic_error(res, *e);
    auto started = start_generation(ctx, std::move(*prepared.value), req, res);
    if (!started) return reply_anthropic_error(res, started.error);

    auto a = std::make_shared<Reply>();
    a->generation = std::move(*started.value);
    const GenerationRequest& r = a->generation->prepared.request;
    a->id = make_message_id();
    a->model = r.model;
    a->parser.emplace(a->generation->prepared.output_format, a->generation->prepared.rendered_prompt, r.tools, r.sampling.seed);

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

void handle_count_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    if (auto e = check_serving(ctx)) return reply_anthropic_error(res, *e);
    auto parsed = parse_messages_request(req.body, ctx.options.default_sampling, MessagesEndpoint::CountTokens);
    if (!parsed) return reply_anthropic_error(res, parsed.error);
    auto prompt = render_chat_prompt(ctx, *parsed.value);
    if (!prompt) return reply_anthropic_error(res, prompt.error);
    res.status = 200;
    res.set_content(json{{"input_tokens", prompt.value->tokens.size()}}.dump(), "application/json");
}

}  // namespace strata::server
