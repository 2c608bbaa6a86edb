#include "server/openai_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <random>

#include "server/request_json.h"
#include "server/speculative_request.h"

namespace strata::server {

using ojson = nlohmann::ordered_json;

nlohmann::json ApiError::to_json() const {
    nlohmann::json e = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
    if (!param.empty()) e["param"] = param;
    if (!code.empty()) e["code"] = code;
    return {{"error", e}};
}

ApiError ApiError::invalid(std::string param, std::string message, std::string code) {
    return ApiError{400, std::move(message), "invalid_request_error", std::move(code), std::move(param)};
}

ApiError ApiError::unsupported(std::string param, std::string message) {
    return ApiError{400, std::move(message), "invalid_request_error", "unsupported_parameter", std::move(param)};
}

namespace {

constexpr size_t kMaxStopStrings = 16;

std::optional<ApiError> check_model(const ojson& body, const ModelNameRule& rule, std::string& out) {
    const ojson* v = field(body, "model");
    if (!v) return std::nullopt;
    if (!v->is_string()) return ApiError::invalid("model", fmt::format("model: expected a string, got {}", shown(*v)));
    out = v->get<std::string>();
    return check_model_name(out, rule);
}

// Parameters that would change what the client gets back; refusing them is better than a reply
// that silently differs from what was asked for.
std::optional<ApiError> reject_unsupported(const ojson& body, Endpoint endpoint) {
    if (const ojson* n = field(body, "n"); n && !(n->is_number_integer() && n->get<int64_t>() == 1)) {
        return ApiError::unsupported("n", fmt::format("n: only 1 choice per request is supported, got {} (send separate requests)", shown(*n)));
    }
    if (const ojson* v = field(body, "logprobs")) {
        const bool asked = endpoint == Endpoint::Chat ? !(v->is_boolean() && !v->get<bool>()) : !(v->is_number_integer() && v->get<int64_t>() == 0);
        if (asked) return ApiError::unsupported("logprobs", "logprobs: log probabilities are not supported by this server");
    }
    if (field(body, "top_logprobs")) return ApiError::unsupported("top_logprobs", "top_logprobs: log probabilities are not supported by this server");
    if (const ojson* v = field(body, "logit_bias"); v && !(v->is_object() && v->empty())) {
        return ApiError::unsupported("logit_bias", "logit_bias: not supported by this server");
    }
    for (const char* name : {"functions", "function_call", "audio", "prediction"}) {
        if (field(body, name)) return ApiError::unsupported(name, fmt::format("{}: not supported by this server", name));
    }
    if (const ojson* v = field(body, "modalities"); v && *v != ojson::array({"text"})) {
        return ApiError::unsupported("modalities", "modalities: only [\"text\"] is supported");
    }
    if (endpoint == Endpoint::Completion) {
        if (const ojson* v = field(body, "best_of"); v && !(v->is_number_integer() && v->get<int64_t>() == 1)) {
            return ApiError::unsupported("best_of", "best_of: only 1 is supported");
        }
        if (const ojson* v = field(body, "echo"); v && !(v->is_boolean() && !v->get<bool>())) {
            return ApiError::unsupported("echo", "echo: echoing the prompt is not supported");
        }
        if (const ojson* v = field(body, "suffix"); v && !(v->is_string() && v->get<std::string>().empty())) {
            return ApiError::unsupported("suffix", "suffix: insertion (fill-in-the-middle) is not supported");
        }
    }
    return std::nullopt;
}

// response_format (text, json_object, json_schema) and llama-server's GBNF `grammar`; a forced
// tool_choice (parse_tools) is a constraint too, and only one may be given.
std::optional<ApiError> parse_output_constraint(const ojson& body, GenerationRequest& r) {
    const bool forced_call = r.constraint.kind == OutputConstraint::Kind::ToolCall;
    if (const ojson* v = field(body, "response_format")) {
        const ojson* type = v->is_object() ? field(*v, "type") : nullptr;
        const std::string t = type && type->is_string() ? type->get<std::string>() : "";
        if (t != "text" && t != "json_object" && t != "json_schema") {
            return ApiError::invalid("response_format", fmt::format("response_format: expected {{\"type\": \"text\" | \"json_object\" | \"json_schema\"}}, got {}", shown(*v)));
        }
        if (t != "text" && forced_call) {
            return ApiError::invalid("response_format", "response_format: a forced tool_choice already fixes the output; send one of them");
        }
        if (t == "json_object") r.constraint.kind = OutputConstraint::Kind::JsonObject;
        if (t == "json_schema") {
            const ojson* js = field(*v, "json_schema");
            const ojson* schema = js && js->is_object() ? field(*js, "schema") : nullptr;
            if (!schema || !(schema->is_object() || schema->is_boolean())) {
                return ApiError::invalid("response_format", fmt::format("response_format.json_schema: expected {{\"name\", \"schema\": {{...}}, \"strict\"}}, got {}", shown(js ? *js : *v)));
            }
            r.constraint.kind = OutputConstraint::Kind::JsonSchema;
            r.constraint.schema = *schema;
            const ojson* strict = field(*js, "strict");
            if (strict && !strict->is_boolean()) return ApiError::invalid("response_format", fmt::format("response_format.json_schema.strict: expected true or false, got {}", shown(*strict)));
            r.constraint.strict = strict && strict->get<bool>();
        }
    }
    if (const ojson* g = field(body, "grammar")) {
        if (!g->is_string()) return ApiError::invalid("grammar", fmt::format("grammar: expected GBNF text (a string), got {}", shown(*g)));
        if (r.constraint.kind != OutputConstraint::Kind::None) {
            return ApiError::invalid("grammar", "grammar: response_format or a forced tool_choice already fixes the output; send one of them");
        }
        r.constraint.kind = OutputConstraint::Kind::Grammar;
        r.constraint.grammar = g->get<std::string>();
    }
    return std::nullopt;
}

// The fields both endpoints share: sampling, limits, stop strings, streaming.
std::optional<ApiError> parse_common(const ojson& body, const SamplingParams& defaults, GenerationRequest& r) {
    if (auto e = reject_unsupported(body, r.endpoint)) return e;
    if (auto e = parse_output_constraint(body, r)) return e;
    if (auto e = parse_speculative(body, r.speculative)) return e;
    r.sampling = defaults;
    if (auto e = read_float(body, "temperature", 0.0, 2.0, r.sampling.temperature)) return e;
    if (auto e = read_float(body, "top_p", 0.0, 1.0, r.sampling.top_p)) return e;
    if (r.sampling.top_p == 0.0f) return ApiError::invalid("top_p", "top_p: expected a number above 0 and at most 1, got 0");
    if (auto e = read_float(body, "min_p", 0.0, 1.0, r.sampling.min_p)) return e;
    if (auto e = read_float(body, "presence_penalty", -2.0, 2.0, r.sampling.presence_penalty)) return e;
    if (auto e = read_float(body, "frequency_penalty", -2.0, 2.0, r.sampling.frequency_penalty)) return e;
    if (auto e = read_float(body, "repeat_penalty", 0.01, 10.0, r.sampling.repetition_penalty)) return e;
    std::optional<int64_t> top_k, seed, max_tokens, max_completion_tokens;
    if (auto e = read_int(body, "top_k", 0, std::numeric_limits<int32_t>::max(), top_k)) return e;
    if (top_k) r.sampling.top_k = static_cast<int32_t>(*top_k);
    if (auto e = read_int(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), seed)) return e;
    if (seed) {
        r.sampling.seed = static_cast<uint64_t>(*seed);
        r.seed_given = true;
    } else {
        // Without a seed, OpenAI's sampling differs from request to request; so does ours.
        r.sampling.seed = std::random_device{}() * 0x9E3779B97F4A7C15ull + std::random_device{}();
    }
    if (auto e = read_int(body, "max_tokens", 1, std::numeric_limits<int32_t>::max(), max_tokens)) return e;
    if (auto e = read_int(body, "max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), max_completion_tokens)) return e;
    if (max_tokens && max_completion_tokens && *max_tokens != *max_completion_tokens) {
        return ApiError::invalid("max_tokens", fmt::format("max_tokens ({}) and max_completion_tokens ({}) disagree: send one of them",
                                                           *max_tokens, *max_completion_tokens));
    }
    r.max_tokens = max_completion_tokens ? max_completion_tokens : max_tokens;

    if (const ojson* stop = field(body, "stop")) {
        if (stop->is_string()) {
            r.stop.push_back(stop->get<std::string>());
        } else if (stop->is_array()) {
            for (const auto& s : *stop) {
                if (!s.is_string()) return ApiError::invalid("stop", fmt::format("stop: expected a string or a list of strings, got an element {}", shown(s)));
                r.stop.push_back(s.get<std::string>());
            }
        } else {
            return ApiError::invalid("stop", fmt::format("stop: expected a string or a list of strings, got {}", shown(*stop)));
        }
        if (r.stop.size() > kMaxStopStrings) {
            return ApiError::invalid("stop", fmt::format("stop: at most {} stop strings, got {}", kMaxStopStrings, r.stop.size()));
        }
        for (const auto& s : r.stop) {
            if (s.empty()) return ApiError::invalid("stop", "stop: stop strings must not be empty");
        }
    }
    if (auto e = read_bool(body, "stream", r.stream)) return e;
    if (auto e = read_bool(body, "ignore_eos", r.ignore_eos)) return e;
    if (const ojson* so = field(body, "stream_options")) {
        if (!r.stream) return ApiError::invalid("stream_options", "stream_options: only allowed when stream is true");
        if (!so->is_object()) return ApiError::invalid("stream_options", fmt::format("stream_options: expected an object, got {}", shown(*so)));
        if (auto e = read_bool(*so, "include_usage", r.include_usage)) {
            e->param = "stream_options.include_usage";
            return e;
        }
    }
    return std::nullopt;
}

// Content as a string: text parts joined; parts the model cannot read are refused.
ApiResult<std::string> flatten_content(const ojson& content, size_t index) {
    const std::string param = fmt::format("messages[{}].content", index);
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) return ApiError::invalid(param, fmt::format("{}: expected a string or a list of content parts, got {}", param, shown(content)));
    std::string text;
    for (const auto& part : content) {
        const ojson* type = part.is_object() ? field(part, "type") : nullptr;
        if (!type || !type->is_string()) return ApiError::invalid(param, fmt::format("{}: each part needs a \"type\", got {}", param, shown(part)));
        if (type->get<std::string>() != "text") {
            return ApiError::unsupported(param, fmt::format("{}: content parts of type '{}' are not supported (text only)", param, type->get<std::string>()));
        }
        const ojson* t = field(part, "text");
        if (!t || !t->is_string()) return ApiError::invalid(param, fmt::format("{}: a text part needs a string \"text\"", param));
        if (!text.empty()) text += '\n';
        text += t->get<std::string>();
    }
    return text;
}

ApiResult<ojson> normalize_messages(const ojson& body) {
    const ojson* msgs = field(body, "messages");
    if (!msgs) return ApiError::invalid("messages", "messages: required (a non-empty list of {role, content})", "missing_required_parameter");
    if (!msgs->is_array() || msgs->empty()) return ApiError::invalid("messages", fmt::format("messages: expected a non-empty list, got {}", shown(*msgs)));
    ojson out = ojson::array();
    for (size_t i = 0; i < msgs->size(); ++i) {
        const ojson& m = (*msgs)[i];
        const std::string where = fmt::format("messages[{}]", i);
        if (!m.is_object()) return ApiError::invalid(where, fmt::format("{}: expected an object, got {}", where, shown(m)));
        const ojson* role = field(m, "role");
        static const char* kRoles[] = {"system", "developer", "user", "assistant", "tool"};
        if (!role || !role->is_string() ||
            std::find(std::begin(kRoles), std::end(kRoles), role->get<std::string>()) == std::end(kRoles)) {
            return ApiError::invalid(where + ".role", fmt::format("{}.role: expected system, developer, user, assistant or tool, got {}",
                                                                  where, role ? shown(*role) : "nothing"));
        }
        ojson n = m;
        // Chat templates know "system"; "developer" is OpenAI's newer name for it.
        if (role->get<std::string>() == "developer") n["role"] = "system";
        const bool assistant = role->get<std::string>() == "assistant";
        if (const ojson* content = field(m, "content")) {
            auto text = flatten_content(*content, i);
            if (!text) return text.error;
            n["content"] = *text.value;
        } else if (assistant) {
            n["content"] = "";  // an assistant turn that only calls tools
        } else {
            return ApiError::invalid(where + ".content", fmt::format("{}.content: required for role {}", where, role->get<std::string>()),
                                     "missing_required_parameter");
        }
        if (const ojson* calls = field(m, "tool_calls")) {
            if (!calls->is_array()) return ApiError::invalid(where + ".tool_calls", fmt::format("{}.tool_calls: expected a list", where));
            // OpenAI sends arguments as JSON text; templates index into them as objects.
            for (auto& call : n["tool_calls"]) {
                if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
                    return ApiError::invalid(where + ".tool_calls", fmt::format("{}.tool_calls: each call needs a \"function\" object", where));
                }
                auto& fn = call["function"];
                if (fn.contains("arguments") && fn["arguments"].is_string()) {
                    ojson args = ojson::parse(fn["arguments"].get<std::string>(), nullptr, false);
                    if (!args.is_discarded() && args.is_object()) fn["arguments"] = std::move(args);
                }
            }
        }
        out.push_back(std::move(n));
    }
    return out;
}

std::optional<ApiError> parse_tools(const ojson& body, GenerationRequest& r) {
    const ojson* tools = field(body, "tools");
    if (tools) {
        if (!tools->is_array()) return ApiError::invalid("tools", fmt::format("tools: expected a list, got {}", shown(*tools)));
        for (size_t i = 0; i < tools->size(); ++i) {
            const ojson& t = (*tools)[i];
            const ojson* fn = t.is_object() ? field(t, "function") : nullptr;
            const ojson* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
            if (!name || !name->is_string()) {
                return ApiError::invalid(fmt::format("tools[{}]", i), fmt::format("tools[{}]: expected {{\"type\": \"function\", \"function\": {{\"name\", ...}}}}", i));
            }
        }
        if (!tools->empty()) r.tools = *tools;
    }
    if (const ojson* choice = field(body, "tool_choice")) {
        const std::string c = choice->is_string() ? choice->get<std::string>() : "";
        const ojson* fn = choice->is_object() ? field(*choice, "function") : nullptr;
        const ojson* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
        if (c == "none") {
            r.tools = nullptr;
        } else if (c == "required") {
            r.constraint = OutputConstraint::tool_call("");  // constrained decoding writes one call
        } else if (name && name->is_string()) {
            r.constraint = OutputConstraint::tool_call(name->get<std::string>());
        } else if (c != "auto") {
            return ApiError::invalid("tool_choice", fmt::format("tool_choice: expected \"auto\", \"none\", \"required\" or {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}, got {}", shown(*choice)));
        }
        if (r.constraint.kind == OutputConstraint::Kind::ToolCall && r.tools.is_null()) {
            return ApiError::invalid("tool_choice", "tool_choice: forcing a tool call needs tools; send the tools the model may call");
        }
    }
    if (const ojson* kw = field(body, "chat_template_kwargs")) {
        if (!kw->is_object()) return ApiError::invalid("chat_template_kwargs", "chat_template_kwargs: expected an object");
        r.template_kwargs = *kw;
    }
    return std::nullopt;
}

}  // namespace

std::optional<ApiError> check_model_name(const std::string& requested, const ModelNameRule& rule) {
    if (!rule.strict || requested.empty() || requested == rule.served) return std::nullopt;
    return ApiError{404, fmt::format("The model '{}' does not exist: this server serves '{}' (GET /v1/models lists it)", requested, rule.served),
                    "invalid_request_error", "model_not_found", "model"};
}

ApiResult<GenerationRequest> parse_chat_request(std::string_view body, const SamplingParams& defaults,
                                                const ModelNameRule& model) {
    auto j = parse_json_object(body);
    if (!j) return j.error;
    GenerationRequest r;
    r.endpoint = Endpoint::Chat;
    if (auto e = check_model(*j.value, model, r.model)) return *e;
    auto messages = normalize_messages(*j.value);
    if (!messages) return messages.error;
    r.messages = std::move(*messages.value);
    if (auto e = parse_tools(*j.value, r)) return *e;
    if (auto e = parse_common(*j.value, defaults, r)) return *e;
    return r;
}

ApiResult<GenerationRequest> parse_completion_request(std::string_view body, const SamplingParams& defaults,
                                                      const ModelNameRule& model) {
    auto j = parse_json_object(body);
    if (!j) return j.error;
    GenerationRequest r;
    r.endpoint = Endpoint::Completion;
    if (auto e = check_model(*j.value, model, r.model)) return *e;
    const ojson* prompt = field(*j.value, "prompt");
    if (!prompt) return ApiError::invalid("prompt", "prompt: required (a string, or a list of token ids)", "missing_required_parameter");
    // A list of one string is the same prompt; a list of several would be a batch of prompts.
    if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) prompt = &(*prompt)[0];
    if (prompt->is_string()) {
        r.prompt_text = prompt->get<std::string>();
        if (r.prompt_text.empty()) return ApiError::invalid("prompt", "prompt: must not be empty");
    } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number_integer()) {
        for (const auto& id : *prompt) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
                return ApiError::invalid("prompt", fmt::format("prompt: a list of token ids must hold only non-negative integers, got {}", shown(id)));
            }
            r.prompt_tokens.push_back(static_cast<int32_t>(id.get<int64_t>()));
        }
        r.prompt_is_tokens = true;
    } else if (prompt->is_array() && prompt->size() > 1) {
        return ApiError::unsupported("prompt", fmt::format("prompt: batches of {} prompts are not supported (send one request per prompt)", prompt->size()));
    } else {
        return ApiError::invalid("prompt", fmt::format("prompt: expected a non-empty string or list of token ids, got {}", shown(*prompt)));
    }
    if (auto e = parse_common(*j.value, defaults, r)) return *e;
    return r;
}

std::optional<ApiError> check_context_budget(int64_t n_prompt, std::optional<int64_t> requested, int64_t n_ctx,
                                             int64_t& max_tokens) {
    if (n_prompt >= n_ctx) {
        return ApiError{400,
                        fmt::format("the prompt is {} tokens, {} more than the context of {} tokens leaves room for "
                                    "(at least one token must be generated): shorten the prompt or start the server with a larger --ctx-size",
                                    n_prompt, n_prompt - n_ctx + 1, n_ctx),
                        "invalid_request_error", "context_length_exceeded", "messages"};
    }
    const int64_t room = n_ctx - n_prompt;
    if (requested && *requested > room) {
        return ApiError{400,
                        fmt::format("max_tokens is {} but the prompt ({} tokens) leaves room for only {} in the context of {} "
                                    "({} too many): ask for at most {}",
                                    *requested, n_prompt, room, n_ctx, *requested - room, room),
                        "invalid_request_error", "context_length_exceeded", "max_tokens"};
    }
    max_tokens = requested ? *requested : room;
    return std::nullopt;
}

// ---- responses -------------------------------------------------------------------------------

ResponseMeta make_response_meta(Endpoint endpoint, const std::string& model) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    ResponseMeta m;
    m.id = fmt::format("{}-{:016x}", endpoint == Endpoint::Chat ? "chatcmpl" : "cmpl", rng());
    m.created = static_cast<int64_t>(std::time(nullptr));
    m.model = model;
    return m;
}

nlohmann::json usage_json(const Usage& u) {
    return {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

nlohmann::json timings_json(const Usage& u) {
    const int64_t computed = u.prompt_tokens - u.cached_tokens;
    auto per_second = [](int64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
    return {{"prompt_n", computed},
            {"prompt_ms", u.prompt_seconds * 1e3},
            {"prompt_per_second", per_second(computed, u.prompt_seconds)},
            {"predicted_n", u.completion_tokens},
            {"predicted_ms", u.generation_seconds * 1e3},
            {"predicted_per_second", per_second(u.completion_tokens, u.generation_seconds)},
            {"cache_n", u.cached_tokens}};
}

namespace {
nlohmann::json tool_calls_json(const std::vector<ToolCall>& calls) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < calls.size(); ++i) {
        out.push_back({{"index", i},
                       {"id", calls[i].id},
                       {"type", "function"},
                       {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}});
    }
    return out;
}
nlohmann::json finish_json(std::string_view finish_reason) {
    return finish_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(finish_reason);
}
}  // namespace

nlohmann::json chat_response(const ResponseMeta& meta, const ChatMessageOut& message, std::string_view finish_reason,
                             const Usage& usage) {
    nlohmann::json msg = {{"role", "assistant"}, {"content", message.content}};
    if (!message.reasoning.empty()) msg["reasoning_content"] = message.reasoning;
    if (!message.tool_calls.empty()) {
        msg["tool_calls"] = tool_calls_json(message.tool_calls);
        if (message.content.empty()) msg["content"] = nullptr;
    }
    return {{"id", meta.id},
            {"object", "chat.completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"system_fingerprint", "strata"},
            {"choices", {{{"index", 0}, {"message", msg}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish_reason)}}}},
            {"usage", usage_json(usage)},
            {"timings", timings_json(usage)}};
}

nlohmann::json chat_chunk(const ResponseMeta& meta, const nlohmann::json& delta, std::string_view finish_reason) {
    return {{"id", meta.id},
            {"object", "chat.completion.chunk"},
            {"created", meta.created},
            {"model", meta.model},
            {"system_fingerprint", "strata"},
            {"choices", {{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish_reason)}}}}};
}

nlohmann::json completion_response(const ResponseMeta& meta, const std::string& text, std::string_view finish_reason,
                                   const Usage& usage) {
    return {{"id", meta.id},
            {"object", "text_completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"system_fingerprint", "strata"},
            {"choices", {{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish_reason)}}}},
            {"usage", usage_json(usage)},
            {"timings", timings_json(usage)}};
}

nlohmann::json completion_chunk(const ResponseMeta& meta, const std::string& text, std::string_view finish_reason) {
    return {{"id", meta.id},
            {"object", "text_completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"system_fingerprint", "strata"},
            {"choices", {{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish_reason)}}}}};
}

nlohmann::json usage_chunk(const ResponseMeta& meta, Endpoint endpoint, const Usage& usage) {
    return {{"id", meta.id},
            {"object", endpoint == Endpoint::Chat ? "chat.completion.chunk" : "text_completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"system_fingerprint", "strata"},
            {"choices", nlohmann::json::array()},
            {"usage", usage_json(usage)},
            {"timings", timings_json(usage)}};
}

nlohmann::json models_list(const std::string& model_id, int64_t created, int64_t n_ctx) {
    return {{"object", "list"},
            {"data", {{{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "strata"}, {"meta", {{"n_ctx", n_ctx}}}}}}};
}

}  // namespace strata::server
