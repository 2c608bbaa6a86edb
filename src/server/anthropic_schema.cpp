#include "server/anthropic_schema.h"

#include <fmt/format.h>

#include <limits>
#include <random>

#include "server/request_json.h"
#include "server/speculative_request.h"

namespace strata::server {

using ojson = nlohmann::ordered_json;

namespace {

// As the OpenAI route: each stop string is searched for after every token.
constexpr size_t kMaxStopSequences = 16;

// A block list's element: its "type", or an error naming it.
ApiResult<std::string> block_type(const ojson& block, const std::string& where) {
    const ojson* type = block.is_object() ? field(block, "type") : nullptr;
    if (!type || !type->is_string()) {
        return ApiError::invalid(where, fmt::format("{}: expected a content block {{\"type\": ..., ...}}, got {}", where, shown(block)));
    }
    return type->get<std::string>();
}

ApiResult<std::string> string_field(const ojson& obj, const char* name, const std::string& where) {
    const ojson* v = field(obj, name);
    if (!v || !v->is_string()) {
        return ApiError::invalid(where + "." + name, fmt::format("{}.{}: expected a string, got {}", where, name, v ? shown(*v) : "nothing"));
    }
    return v->get<std::string>();
}

ApiError refused_block(const std::string& where, const std::string& type) {
    if (type == "image" || type == "document") {
        return ApiError::unsupported(where, fmt::format("{}: {} blocks are not supported: the served model reads text only (send the content as text)", where, type));
    }
    return ApiError::unsupported(where, fmt::format("{}: content blocks of type '{}' are not supported here", where, type));
}

void append_line(std::string& text, const std::string& more) {
    if (!text.empty()) text += '\n';
    text += more;
}

// Text blocks joined with newlines (system prompts, tool results); other block types refused.
ApiResult<std::string> text_of(const ojson& content, const std::string& where) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) return ApiError::invalid(where, fmt::format("{}: expected a string or a list of text blocks, got {}", where, shown(content)));
    std::string text;
    for (size_t i = 0; i < content.size(); ++i) {
        const std::string at = fmt::format("{}[{}]", where, i);
        auto type = block_type(content[i], at);
        if (!type) return type.error;
        if (*type.value != "text") return refused_block(at, *type.value);
        auto t = string_field(content[i], "text", at);
        if (!t) return t.error;
        append_line(text, *t.value);
    }
    return text;
}

// A user turn: text blocks become one user message, each tool_result a "tool" message, in the
// order they came (Anthropic puts a turn's tool results first).
std::optional<ApiError> add_user_turn(const ojson& content, const std::string& where, ojson& out) {
    if (content.is_string()) {
        out.push_back({{"role", "user"}, {"content", content.get<std::string>()}});
        return std::nullopt;
    }
    std::string text;
    bool has_text = false;
    auto flush_text = [&] {
        if (has_text) out.push_back({{"role", "user"}, {"content", text}});
        text.clear();
        has_text = false;
    };
    for (size_t i = 0; i < content.size(); ++i) {
        const std::string at = fmt::format("{}[{}]", where, i);
        const ojson& block = content[i];
        auto type = block_type(block, at);
        if (!type) return type.error;
        if (*type.value == "text") {
            auto t = string_field(block, "text", at);
            if (!t) return t.error;
            append_line(text, *t.value);
            has_text = true;
        } else if (*type.value == "tool_result") {
            auto id = string_field(block, "tool_use_id", at);
            if (!id) return id.error;
            std::string result;
            if (const ojson* c = field(block, "content")) {
                auto t = text_of(*c, at + ".content");
                if (!t) return t.error;
                result = std::move(*t.value);
            }
            bool is_error = false;
            if (auto e = read_bool(block, "is_error", is_error)) {
                e->param = at + ".is_error";
                e->message = at + "." + e->message;
                return e;
            }
            // Chat templates have no field for a failed call; the model reads it in the text.
            if (is_error) result = "Error: " + result;
            flush_text();
            out.push_back({{"role", "tool"}, {"tool_call_id", *id.value}, {"content", result}});
        } else {
            return refused_block(at, *type.value);
        }
    }
    flush_text();
    return std::nullopt;
}

// An assistant turn: text, reasoning (thinking blocks) and tool calls with object arguments, as
// the templates read an OpenAI assistant message. Redacted thinking is encrypted: nothing to show
// the model, so it is dropped.
std::optional<ApiError> add_assistant_turn(const ojson& content, const std::string& where, ojson& out) {
    ojson msg = {{"role", "assistant"}, {"content", ""}};
    if (content.is_string()) {
        msg["content"] = content.get<std::string>();
        out.push_back(std::move(msg));
        return std::nullopt;
    }
    std::string text, reasoning;
    ojson calls = ojson::array();
    for (size_t i = 0; i < content.size(); ++i) {
        const std::string at = fmt::format("{}[{}]", where, i);
        const ojson& block = content[i];
        auto type = block_type(block, at);
        if (!type) return type.error;
        const std::string& t = *type.value;
        if (t == "text") {
            auto s = string_field(block, "text", at);
            if (!s) return s.error;
            append_line(text, *s.value);
        } else if (t == "thinking") {
            auto s = string_field(block, "thinking", at);
            if (!s) return s.error;
            append_line(reasoning, *s.value);
        } else if (t == "redacted_thinking") {
            continue;
        } else if (t == "tool_use") {
            auto id = string_field(block, "id", at);
            if (!id) return id.error;
            auto name = string_field(block, "name", at);
            if (!name) return name.error;
            const ojson* input = field(block, "input");
            if (!input || !input->is_object()) {
                return ApiError::invalid(at + ".input", fmt::format("{}.input: expected an object, got {}", at, input ? shown(*input) : "nothing"));
            }
            calls.push_back({{"id", *id.value}, {"type", "function"}, {"function", {{"name", *name.value}, {"arguments", *input}}}});
        } else {
            return refused_block(at, t);
        }
    }
    msg["content"] = text;
    if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    out.push_back(std::move(msg));
    return std::nullopt;
}

std::optional<ApiError> parse_messages(const ojson& body, GenerationRequest& r) {
    ojson out = ojson::array();
    if (const ojson* system = field(body, "system")) {
        auto text = text_of(*system, "system");
        if (!text) return text.error;
        if (!text.value->empty()) out.push_back({{"role", "system"}, {"content", *text.value}});
    }
    const ojson* msgs = field(body, "messages");
    if (!msgs) return ApiError::invalid("messages", "messages: required (a non-empty list of {role, content})", "missing_required_parameter");
    if (!msgs->is_array() || msgs->empty()) return ApiError::invalid("messages", fmt::format("messages: expected a non-empty list, got {}", shown(*msgs)));
    for (size_t i = 0; i < msgs->size(); ++i) {
        const ojson& m = (*msgs)[i];
        const std::string where = fmt::format("messages[{}]", i);
        if (!m.is_object()) return ApiError::invalid(where, fmt::format("{}: expected an object {{role, content}}, got {}", where, shown(m)));
        const ojson* role = field(m, "role");
        const std::string role_name = role && role->is_string() ? role->get<std::string>() : "";
        if (role_name != "user" && role_name != "assistant" && role_name != "system") {
            return ApiError::invalid(where + ".role", fmt::format("{}.role: expected \"user\", \"assistant\" or \"system\", got {}",
                                                                  where, role ? shown(*role) : "nothing"));
        }
        const ojson* content = field(m, "content");
        if (!content || !(content->is_string() || content->is_array())) {
            return ApiError::invalid(where + ".content", fmt::format("{}.content: expected a string or a list of content blocks, got {}",
                                                                     where, content ? shown(*content) : "nothing"));
        }
        const std::string at = where + ".content";
        if (role_name == "system") {
            // Instructions within the conversation (Claude Code sends them): a system message where
            // it stands. A template that allows a system message only first says so (a 400).
            auto text = text_of(*content, at);
            if (!text) return text.error;
            out.push_back({{"role", "system"}, {"content", *text.value}});
            continue;
        }
        auto e = role_name == "user" ? add_user_turn(*content, at, out) : add_assistant_turn(*content, at, out);
        if (e) return e;
    }
    // A last assistant turn asks Anthropic to continue it (a prefill). The templates close every
    // assistant turn they render, so the reply would start a new one instead: refused rather
    // than answered differently.
    if (msgs->back().is_object() && msgs->back().value("role", "") == "assistant") {
        return ApiError::unsupported(fmt::format("messages[{}]", msgs->size() - 1),
                                     fmt::format("messages[{}]: the last message is the assistant's: continuing (prefilling) a reply is not supported; end with a user message", msgs->size() - 1));
    }
    r.messages = std::move(out);
    return std::nullopt;
}

// Client tools (name, description, input_schema) in the OpenAI form the templates and the
// output parser take. Anthropic's server tools (web search, code execution, ...) run on
// Anthropic's side and have no input_schema: refused.
std::optional<ApiError> parse_tools(const ojson& body, GenerationRequest& r) {
    const ojson* tools = field(body, "tools");
    if (!tools) return std::nullopt;
    if (!tools->is_array()) return ApiError::invalid("tools", fmt::format("tools: expected a list, got {}", shown(*tools)));
    ojson out = ojson::array();
    for (size_t i = 0; i < tools->size(); ++i) {
        const ojson& t = (*tools)[i];
        const std::string where = fmt::format("tools[{}]", i);
        if (!t.is_object()) return ApiError::invalid(where, fmt::format("{}: expected an object {{name, description, input_schema}}, got {}", where, shown(t)));
        if (const ojson* type = field(t, "type"); type && !(type->is_string() && type->get<std::string>() == "custom")) {
            return ApiError::unsupported(where + ".type", fmt::format("{}.type: only client tools (\"custom\", with an input_schema) are supported, got {}", where, shown(*type)));
        }
        auto name = string_field(t, "name", where);
        if (!name) return name.error;
        if (name.value->empty()) return ApiError::invalid(where + ".name", fmt::format("{}.name: must not be empty", where));
        const ojson* schema = field(t, "input_schema");
        if (!schema || !schema->is_object()) {
            return ApiError::invalid(where + ".input_schema", fmt::format("{}.input_schema: expected a JSON schema object, got {}", where, schema ? shown(*schema) : "nothing"));
        }
        ojson fn = {{"name", *name.value}};
        if (const ojson* d = field(t, "description")) {
            if (!d->is_string()) return ApiError::invalid(where + ".description", fmt::format("{}.description: expected a string, got {}", where, shown(*d)));
            fn["description"] = *d;
        }
        fn["parameters"] = *schema;
        out.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
    if (!out.empty()) r.tools = std::move(out);
    return std::nullopt;
}

// "auto" keeps the tools; "none" leaves them out of the prompt, so the model is not offered
// any (as the OpenAI route's "none"). "any" and "tool" force a call: the reply is sampled under
// the grammar of a call to one of the tools (or the named one). disable_parallel_tool_use is accepted but
// not enforced: the reply carries the calls the model wrote.
std::optional<ApiError> parse_tool_choice(const ojson& body, GenerationRequest& r) {
    const ojson* choice = field(body, "tool_choice");
    if (!choice) return std::nullopt;
    const ojson* type = choice->is_object() ? field(*choice, "type") : nullptr;
    const std::string t = type && type->is_string() ? type->get<std::string>() : "";
    if (t == "auto") return std::nullopt;
    if (t == "none") {
        r.tools = nullptr;
        return std::nullopt;
    }
    if (t == "any" || t == "tool") {
        // A forced call: constrained decoding (server/constrained_output.h) writes one call.
        std::string name;
        if (t == "tool") {
            const ojson* n = field(*choice, "name");
            if (!n || !n->is_string()) return ApiError::invalid("tool_choice", fmt::format("tool_choice: {{\"type\": \"tool\"}} needs the tool's \"name\", got {}", shown(*choice)));
            name = n->get<std::string>();
        }
        if (r.tools.is_null()) return ApiError::invalid("tool_choice", fmt::format("tool_choice: {{\"type\": \"{}\"}} forces a tool call and needs tools; send the tools the model may call", t));
        r.constraint = OutputConstraint::tool_call(name);
        return std::nullopt;
    }
    return ApiError::invalid("tool_choice", fmt::format("tool_choice: expected {{\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}}, got {}", shown(*choice)));
}

// Extended thinking switches the template's reasoning on or off (enable_thinking, as Qwen3's
// templates read it); the budget is not enforced: max_tokens bounds the whole reply.
std::optional<ApiError> parse_thinking(const ojson& body, GenerationRequest& r) {
    const ojson* thinking = field(body, "thinking");
    if (!thinking) return std::nullopt;
    const ojson* type = thinking->is_object() ? field(*thinking, "type") : nullptr;
    const std::string t = type && type->is_string() ? type->get<std::string>() : "";
    if (t == "enabled" || t == "adaptive") r.template_kwargs["enable_thinking"] = true;
    else if (t == "disabled") r.template_kwargs["enable_thinking"] = false;
    else return ApiError::invalid("thinking", fmt::format("thinking: expected {{\"type\": \"enabled\" | \"disabled\"}}, got {}", shown(*thinking)));
    return std::nullopt;
}

std::optional<ApiError> parse_generation_fields(const ojson& body, const SamplingParams& defaults, GenerationRequest& r) {
    if (auto e = parse_speculative(body, r.speculative)) return e;
    r.sampling = defaults;
    // Anthropic's ranges: temperature 0-1, top_p in (0, 1].
    if (auto e = read_float(body, "temperature", 0.0, 1.0, r.sampling.temperature)) return e;
    if (auto e = read_float(body, "top_p", 0.0, 1.0, r.sampling.top_p)) return e;
    if (r.sampling.top_p == 0.0f) return ApiError::invalid("top_p", "top_p: expected a number above 0 and at most 1, got 0");
    std::optional<int64_t> top_k, max_tokens;
    if (auto e = read_int(body, "top_k", 0, std::numeric_limits<int32_t>::max(), top_k)) return e;
    if (top_k) r.sampling.top_k = static_cast<int32_t>(*top_k);
    // No seed in this API: sampling differs from request to request, as Anthropic's does.
    r.sampling.seed = std::random_device{}() * 0x9E3779B97F4A7C15ull + std::random_device{}();
    if (!field(body, "max_tokens")) {
        return ApiError::invalid("max_tokens", "max_tokens: required (the most tokens to generate, at least 1)", "missing_required_parameter");
    }
    if (auto e = read_int(body, "max_tokens", 1, std::numeric_limits<int32_t>::max(), max_tokens)) return e;
    r.max_tokens = max_tokens;
    if (const ojson* stops = field(body, "stop_sequences")) {
        if (!stops->is_array()) return ApiError::invalid("stop_sequences", fmt::format("stop_sequences: expected a list of strings, got {}", shown(*stops)));
        if (stops->size() > kMaxStopSequences) {
            return ApiError::invalid("stop_sequences", fmt::format("stop_sequences: at most {} strings, got {}", kMaxStopSequences, stops->size()));
        }
        for (const auto& s : *stops) {
            if (!s.is_string() || s.get<std::string>().empty()) {
                return ApiError::invalid("stop_sequences", fmt::format("stop_sequences: expected non-empty strings, got an element {}", shown(s)));
            }
            r.stop.push_back(s.get<std::string>());
        }
    }
    if (auto e = read_bool(body, "stream", r.stream)) return e;
    // Only user_id is defined; it identifies the end user to Anthropic and means nothing here.
    if (const ojson* meta = field(body, "metadata")) {
        if (!meta->is_object()) return ApiError::invalid("metadata", fmt::format("metadata: expected an object, got {}", shown(*meta)));
        if (const ojson* user = field(*meta, "user_id"); user && !user->is_string()) {
            return ApiError::invalid("metadata.user_id", fmt::format("metadata.user_id: expected a string, got {}", shown(*user)));
        }
    }
    return std::nullopt;
}

}  // namespace

ApiResult<GenerationRequest> parse_messages_request(std::string_view text, const SamplingParams& defaults,
                                                    MessagesEndpoint endpoint) {
    auto body = parse_json_object(text);
    if (!body) return body.error;
    const ojson& j = *body.value;
    GenerationRequest r;
    r.endpoint = Endpoint::Chat;
    const ojson* model = field(j, "model");
    if (!model) return ApiError::invalid("model", "model: required (any name: this server serves one model)", "missing_required_parameter");
    if (!model->is_string()) return ApiError::invalid("model", fmt::format("model: expected a string, got {}", shown(*model)));
    r.model = model->get<std::string>();
    if (auto e = parse_messages(j, r)) return *e;
    if (auto e = parse_tools(j, r)) return *e;
    if (auto e = parse_tool_choice(j, r)) return *e;
    if (auto e = parse_thinking(j, r)) return *e;
    if (endpoint == MessagesEndpoint::Create) {
        if (auto e = parse_generation_fields(j, defaults, r)) return *e;
    }
    return r;
}

std::optional<ApiError> check_messages_context(int64_t n_prompt, int64_t max_tokens, int64_t n_ctx) {
    if (n_prompt >= n_ctx) {
        return ApiError{400,
                        fmt::format("prompt is too long: {} tokens > {} maximum (the server's context is {} tokens, one of them for "
                                    "the reply: shorten the conversation, or restart the server with a larger --ctx-size)",
                                    n_prompt, n_ctx - 1, n_ctx),
                        "invalid_request_error", "context_length_exceeded", "messages"};
    }
    if (n_prompt + max_tokens > n_ctx) {
        return ApiError{400,
                        fmt::format("input length and `max_tokens` exceed context limit: {} + {} > {}, decrease input length or `max_tokens` and try again",
                                    n_prompt, max_tokens, n_ctx),
                        "invalid_request_error", "context_length_exceeded", "max_tokens"};
    }
    return std::nullopt;
}

nlohmann::json AnthropicError::to_json() const {
    return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

AnthropicError anthropic_error(const ApiError& e) {
    switch (e.http_status) {
        case 400: return {400, "invalid_request_error", e.message};
        case 401: return {401, "authentication_error", e.message};
        case 403: return {403, "permission_error", e.message};
        case 404: return {404, "not_found_error", e.message};
        case 413: return {413, "request_too_large", e.message};
        case 429: return {429, "rate_limit_error", e.message};
        // Loading, a full queue, draining: Anthropic's "try again later" is 529 overloaded_error,
        // which its clients retry.
        case 503: return {529, "overloaded_error", e.message};
        default: break;
    }
    if (e.http_status >= 400 && e.http_status < 500) return {e.http_status, "invalid_request_error", e.message};
    return {e.http_status, "api_error", e.message};
}

namespace {
std::string random_alnum(size_t n) {
    static constexpr char kAlphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string s(n, '0');
    for (char& c : s) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    return s;
}
}  // namespace

std::string make_message_id() { return "msg_" + random_alnum(24); }

std::string tool_use_id(std::string_view parser_call_id) {
    constexpr std::string_view kOpenAiPrefix = "call_";
    if (parser_call_id.substr(0, kOpenAiPrefix.size()) == kOpenAiPrefix) parser_call_id.remove_prefix(kOpenAiPrefix.size());
    return "toolu_" + std::string(parser_call_id);
}

nlohmann::json messages_usage_json(const Usage& u) {
    return {{"input_tokens", u.prompt_tokens - u.cached_tokens},
            {"cache_creation_input_tokens", 0},
            {"cache_read_input_tokens", u.cached_tokens},
            {"output_tokens", u.completion_tokens}};
}

nlohmann::json message_json(const std::string& id, const std::string& model, const nlohmann::json& content,
                            std::string_view stop_reason, const std::string& stop_sequence, const Usage& usage) {
    return {{"id", id},
            {"type", "message"},
            {"role", "assistant"},
            {"model", model},
            {"content", content},
            {"stop_reason", stop_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(stop_reason)},
            {"stop_sequence", stop_sequence.empty() ? nlohmann::json(nullptr) : nlohmann::json(stop_sequence)},
            {"usage", messages_usage_json(usage)}};
}

}  // namespace strata::server
