#include "server/responses_routes.h"

#include <algorithm>
#include <ctime>
#include <memory>
#include <optional>
#include <vector>

#include "server/chat_output.h"
#include "server/completion_routes.h"
#include "server/generation.h"
#include "server/responses_items.h"
#include "server/responses_schema.h"
#include "server/sse.h"

namespace strata::server {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// A response in the making: the request's settings, the generation, the output parser and the
// items it feeds.
struct Reply {
    ResponsesRequest request;
    std::shared_ptr<Generation> generation;
    std::optional<ChatOutputParser> parser;
    OutputItems items;
    ResponseState state;
    int64_t sequence = 0;  // the next stream event's sequence_number
};

// The previous response's conversation and this request's input as the messages to render.
std::optional<ApiError> resolve_conversation(ServerContext& ctx, ResponsesRequest& r) {
    std::optional<StoredResponse> previous;
    if (!r.previous_response_id.empty()) {
        previous = ctx.responses.get(r.previous_response_id);
        if (!previous) return response_not_found(r.previous_response_id, "previous_response_id");
    }
    assemble_messages(r, previous ? &previous->conversation : nullptr);
    if (r.generation.messages.empty()) return ApiError::invalid("input", "input: expected at least one input item");
    return std::nullopt;
}

std::vector<json> feed(Reply& a, std::string_view text) { return a.items.add(a.parser->feed_delta(text)); }

std::vector<json> finish(Reply& a, bool incomplete) {
    std::vector<json> events = a.items.add(a.parser->finish_delta());
    for (auto& e : a.items.close(incomplete)) events.push_back(std::move(e));
    return events;
}

// The reply as the assistant message a later turn's template renders.
ojson assistant_message(const ChatMessageOut& m) {
    ojson msg = {{"role", "assistant"}, {"content", m.content}};
    if (!m.reasoning.empty()) msg["reasoning_content"] = m.reasoning;
    if (!m.tool_calls.empty()) {
        ojson calls = ojson::array();
        for (const auto& c : m.tool_calls) {
            ojson args = ojson::parse(c.arguments, nullptr, /*allow_exceptions=*/false);
            if (args.is_discarded()) args = c.arguments;
            calls.push_back({{"id", responses_call_id(c.id)}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", std::move(args)}}}});
        }
        msg["tool_calls"] = std::move(calls);
    }
    return msg;
}

// The final state once the task is done (its output closed), stored when the request asked to be.
void conclude(ServerContext& ctx, Reply& a, const TaskResult& result) {
    a.state.status = result.outcome == TaskOutcome::Length ? "incomplete" : "completed";
    a.state.output = a.items.output();
    a.state.usage = usage_of(result);
    // Reasoning tokens are not told apart as they are generated; its text is tokenized again.
    const std::string& reasoning = a.items.reasoning_text();
    const auto n = reasoning.empty() ? 0 : static_cast<int64_t>(ctx.model().tokenizer->encode(reasoning, false, false).size());
    a.state.reasoning_tokens = std::min(n, result.generated_tokens);
    if (!a.request.store) return;
    ojson conversation = a.request.conversation;
    conversation.push_back(assistant_message(a.parser->message()));
    ctx.responses.put(a.state.id, {response_json(a.request, a.state), std::move(conversation)});
}

void answer_whole(ServerContext& ctx, Reply& a, httplib::Response& res) {
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
    if (!succeeded(result)) return reply_error(res, error_for(result));
    finish(a, result.outcome == TaskOutcome::Length);
    conclude(ctx, a, result);
    res.status = 200;
    res.set_content(response_json(a.request, a.state).dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// Writes the whole event stream; false when the client went away.
bool stream_events(ServerContext& ctx, Reply& a, httplib::DataSink& sink) {
    Generation& g = *a.generation;
    auto write = [&](json event) {
        event["sequence_number"] = a.sequence++;
        const std::string s = sse_named_event(event);
        return sink.write(s.data(), s.size());
    };
    auto snapshot = [&](const char* type) { return json{{"type", type}, {"response", response_json(a.request, a.state)}}; };
    if (!write(snapshot("response.created")) || !write(snapshot("response.in_progress"))) return false;
    auto last_write = Clock::now();
    auto last_check = last_write;
    while (true) {
        if (client_left(g, last_check)) return false;
        std::optional<TaskEvent> ev = g.task->next(kPollInterval);
        if (!ev) {
            if (Clock::now() - last_write > kKeepAliveInterval) {
                if (!sink.write(sse_comment("keep-alive").data(), sse_comment("keep-alive").size())) return false;
                last_write = Clock::now();
            }
            continue;
        }
        if (ev->kind == TaskEvent::Kind::Text) {
            for (json& e : feed(a, ev->text)) {
                if (!write(std::move(e))) return false;
                last_write = Clock::now();
            }
            continue;
        }
        const TaskResult& result = ev->result;
        if (!succeeded(result)) {
            // The status line went out with the first byte: the failure is the last event.
            a.state.status = "failed";
            a.state.output = a.items.output();
            a.state.error = error_for(result);
            return write(snapshot("response.failed"));
        }
        const bool incomplete = result.outcome == TaskOutcome::Length;
        for (json& e : finish(a, incomplete)) {
            if (!write(std::move(e))) return false;
        }
        conclude(ctx, a, result);
        return write(snapshot(incomplete ? "response.incomplete" : "response.completed"));
    }
}

}  // namespace

void handle_responses_create(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    if (auto e = check_serving(ctx)) return reply_error(res, *e);
    auto parsed = parse_responses_request(req.body, ctx.options.default_sampling, ResponsesEndpoint::Create);
    if (!parsed) return reply_error(res, parsed.error);
    if (auto e = check_model_name(parsed.value->generation.model, ctx.model_name_rule())) return reply_error(res, *e);
    ResponsesRequest& r = *parsed.value;
    if (auto e = resolve_conversation(ctx, r)) return reply_error(res, *e);
    auto prepared = prepare_prompt(ctx, r.generation);
    if (!prepared) return reply_error(res, prepared.error);
    if (auto e = check_responses_context(static_cast<int64_t>(prepared.value->spec.prompt.size()), r.max_output_tokens,
                                         ctx.scheduler().options().n_ctx)) {
        return reply_error(res, *e);
    }
    if (auto e = fit_to_context(ctx, *prepared.value)) return reply_error(res, *e);
    auto started = start_generation(ctx, std::move(*prepared.value), req, res);
    if (!started) return reply_error(res, started.error);

    auto a = std::make_shared<Reply>();
    a->request = std::move(r);
    a->items = OutputItems(a->request.function_namespaces);
    a->generation = std::move(*started.value);
    a->state.id = make_responses_id("resp");
    a->state.created_at = static_cast<int64_t>(std::time(nullptr));
    const GenerationRequest& g = a->generation->prepared.request;
    // A forced call is written in the syntax its grammar uses, which the parser must read.
    a->parser.emplace(a->generation->prepared.output_format, a->generation->prepared.rendered_prompt, g.tools, g.sampling.seed);

    if (!g.stream) return answer_whole(ctx, *a, res);
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");  // reverse proxies must not buffer the stream
    res.set_chunked_content_provider("text/event-stream", [&ctx, a](size_t, httplib::DataSink& sink) {
        if (!stream_events(ctx, *a, sink)) {
            a->generation->task->cancel();
            return false;
        }
        sink.done();
        return true;
    });
}

void handle_responses_input_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    if (auto e = check_serving(ctx)) return reply_error(res, *e);
    auto parsed = parse_responses_request(req.body, ctx.options.default_sampling, ResponsesEndpoint::InputTokens);
    if (!parsed) return reply_error(res, parsed.error);
    if (auto e = resolve_conversation(ctx, *parsed.value)) return reply_error(res, *e);
    auto prompt = render_chat_prompt(ctx, parsed.value->generation);
    if (!prompt) return reply_error(res, prompt.error);
    res.status = 200;
    res.set_content(json{{"object", "response.input_tokens"}, {"input_tokens", prompt.value->tokens.size()}}.dump(), "application/json");
}

void handle_responses_get(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    // Replaying a stored response as events is not kept: only the object is.
    if (req.get_param_value("stream") == "true") {
        return reply_error(res, ApiError::unsupported("stream", "stream: a stored response is returned whole here; leave stream out"));
    }
    auto kept = ctx.responses.get(id);
    if (!kept) return reply_error(res, response_not_found(id, ""));
    res.status = 200;
    res.set_content(kept->response.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void handle_responses_delete(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!ctx.responses.erase(id)) return reply_error(res, response_not_found(id, ""));
    res.status = 200;
    res.set_content(json{{"id", id}, {"object", "response"}, {"deleted", true}}.dump(), "application/json");
}

}  // namespace strata::server
