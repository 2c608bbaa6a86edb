#include "server/responses_schema.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <ctime>
#include <limits>
#include <random>

#include "server/request_json.h"
#include "server/speculative_request.h"

namespace strata::server {

using ojson = nlohmann::ordered_json;

namespace {

// OpenAI's bounds on metadata: 16 pairs, keys up to 64 characters, values up to 512.
constexpr size_t kMaxMetadataPairs = 16;
constexpr size_t kMaxMetadataKey = 64;
constexpr size_t kMaxMetadataValue = 512;

std::string described(const ojson* v) { return v ? shown(*v) : "nothing"; }

ApiResult<std::string> string_field(const ojson& obj, const char* name, const std::string& where) {
    const ojson* v = field(obj, name);
    if (!v || !v->is_string()) {
        return ApiError::invalid(where + "." + name, fmt::format("{}.{}: expected a string, got {}", where, name, described(v)));
    }
    return v->get<std::string>();
}

void append_line(std::string& text, const std::string& more) {
    if (!text.empty()) text += '\n';
    text += more;
}

// A message's content: a string, or text parts (input_text, output_text; a refusal as its text)
// joined with newlines. Images, files and audio are refused: the served model reads text only.
ApiResult<std::string> content_text(const ojson& content, const std::string& where) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) return ApiError::invalid(where, fmt::format("{}: expected a string or a list of content parts, got {}", where, shown(content)));
    std::string text;
    for (size_t i = 0; i < content.size(); ++i) {
        const std::string at = fmt::format("{}[{}]", where, i);
        const ojson& part = content[i];
        const ojson* type = part.is_object() ? field(part, "type") : nullptr;
        if (!type || !type->is_string()) return ApiError::invalid(at, fmt::format("{}: expected a content part {{\"type\": ..., ...}}, got {}", at, shown(part)));
        const std::string t = type->get<std::string>();
        const char* key = t == "input_text" || t == "output_text" ? "text" : t == "refusal" ? "refusal" : nullptr;
        if (!key) {
            return ApiError::unsupported(at, fmt::format("{}: content parts of type '{}' are not supported: the served model reads text only (send input_text)", at, t));
        }
        auto s = string_field(part, key, at);
        if (!s) return s.error;
        append_line(text, *s.value);
    }
    return text;
}

// Turns input items into chat messages. A turn's items arrive as OpenAI lists them: reasoning,
// then the message and/or function calls; the templates want one assistant message holding the
// text, the reasoning and the calls.
class InputConverter {
public:
    std::optional<ApiError> add(const ojson& item, const std::string& where);
    ojson take() { return std::move(out_); }

private:
    ojson& assistant_turn() {
        if (!assistant_open_) {
            out_.push_back({{"role", "assistant"}, {"content", ""}});
            assistant_open_ = true;
        }
        ojson& m = out_.back();
        if (!reasoning_.empty()) {
            m["reasoning_content"] = std::move(reasoning_);
            reasoning_.clear();
        }
        return m;
    }
    void push_other(ojson msg) {
        out_.push_back(std::move(msg));
        assistant_open_ = false;
        reasoning_.clear();  // reasoning not followed by its reply has nothing to attach to
    }
    std::optional<ApiError> add_message(const ojson& item, const std::string& where);
    std::optional<ApiError> add_function_call(const ojson& item, const std::string& where);
    std::optional<ApiError> add_reasoning(const ojson& item, const std::string& where);

    ojson out_ = ojson::array();
    bool assistant_open_ = false;
    std::string reasoning_;
};

std::optional<ApiError> InputConverter::add(const ojson& item, const std::string& where) {
    if (!item.is_object()) return ApiError::invalid(where, fmt::format("{}: expected an input item object, got {}", where, shown(item)));
    const ojson* type = field(item, "type");
    if (type && !type->is_string()) return ApiError::invalid(where + ".type", fmt::format("{}.type: expected a string, got {}", where, shown(*type)));
    // A message may leave out its type ({role, content}, the "easy" input message).
    const std::string t = type ? type->get<std::string>() : "message";
    if (t == "message") return add_message(item, where);
    if (t == "function_call") return add_function_call(item, where);
    if (t == "reasoning") return add_reasoning(item, where);
    if (t == "function_call_output") {
        auto call_id = string_field(item, "call_id", where);
        if (!call_id) return call_id.error;
        const ojson* output = field(item, "output");
        if (!output) return ApiError::invalid(where + ".output", fmt::format("{}.output: required (the call's result)", where), "missing_required_parameter");
        auto text = content_text(*output, where + ".output");
        if (!text) return text.error;
        push_other({{"role", "tool"}, {"tool_call_id", *call_id.value}, {"content", *text.value}});
        return std::nullopt;
    }
    return ApiError::unsupported(where + ".type", fmt::format("{}.type: input items of type '{}' are not supported (send message, function_call, function_call_output or reasoning items)", where, t));
}

std::optional<ApiError> InputConverter::add_message(const ojson& item, const std::string& where) {
    const ojson* role = field(item, "role");
    const std::string r = role && role->is_string() ? role->get<std::string>() : "";
    if (r != "user" && r != "system" && r != "developer" && r != "assistant") {
        return ApiError::invalid(where + ".role", fmt::format("{}.role: expected \"user\", \"system\", \"developer\" or \"assistant\", got {}", where, described(role)));
    }
    const ojson* content = field(item, "content");
    if (!content) return ApiError::invalid(where + ".content", fmt::format("{}.content: required", where), "missing_required_parameter");
    auto text = content_text(*content, where + ".content");
    if (!text) return text.error;
    if (r == "assistant") {
        // A second message of the same turn starts a new assistant message, as the model wrote two.
        if (assistant_open_ && !out_.back()["content"].get_ref<const std::string&>().empty()) assistant_open_ = false;
        assistant_turn()["content"] = *text.value;
        return std::nullopt;
    }
    // "developer" is OpenAI's newer name for the system role, which templates know.
    push_other({{"role", r == "user" ? "user" : "system"}, {"content", *text.value}});
    return std::nullopt;
}

std::optional<ApiError> InputConverter::add_function_call(const ojson& item, const std::string& where) {
    auto call_id = string_field(item, "call_id", where);
    if (!call_id) return call_id.error;
    auto name = string_field(item, "name", where);
    if (!name) return name.error;
    auto arguments = string_field(item, "arguments", where);
    if (!arguments) return arguments.error;
    // Arguments come as JSON text; templates index into them as objects (as the chat route does).
    ojson args = ojson::parse(*arguments.value, nullptr, /*allow_exceptions=*/false);
    if (args.is_discarded() || !args.is_object()) args = *arguments.value;
    ojson& m = assistant_turn();
    if (!m.contains("tool_calls")) m["tool_calls"] = ojson::array();
    m["tool_calls"].push_back({{"id", *call_id.value}, {"type", "function"}, {"function", {{"name", *name.value}, {"arguments", std::move(args)}}}});
    return std::nullopt;
}

// The model's own reasoning (content), or else its summary; an encrypted one cannot be read here.
std::optional<ApiError> InputConverter::add_reasoning(const ojson& item, const std::string& where) {
    std::string text;
    for (const char* list : {"content", "summary"}) {
        const ojson* parts = field(item, list);
        if (!parts) continue;
        if (!parts->is_array()) return ApiError::invalid(where + "." + list, fmt::format("{}.{}: expected a list, got {}", where, list, shown(*parts)));
        for (size_t i = 0; i < parts->size(); ++i) {
            const std::string at = fmt::format("{}.{}[{}]", where, list, i);
            if (!(*parts)[i].is_object()) return ApiError::invalid(at, fmt::format("{}: expected {{\"type\", \"text\"}}, got {}", at, shown((*parts)[i])));
            auto t = string_field((*parts)[i], "text", at);
            if (!t) return t.error;
            append_line(text, *t.value);
        }
        if (!text.empty()) break;
    }
    assistant_open_ = false;  // reasoning starts a turn's output
    append_line(reasoning_, text);
    return std::nullopt;
}

std::optional<ApiError> parse_input(const ojson& body, ResponsesRequest& r) {
    const ojson* input = field(body, "input");
    if (!input) return ApiError::invalid("input", "input: required (a string, or a list of input items)", "missing_required_parameter");
    if (input->is_string()) {
        r.input_messages = ojson::array({{{"role", "user"}, {"content", input->get<std::string>()}}});
        return std::nullopt;
    }
    if (!input->is_array()) return ApiError::invalid("input", fmt::format("input: expected a string or a list of input items, got {}", shown(*input)));
    InputConverter convert;
    for (size_t i = 0; i < input->size(); ++i) {
        if (auto e = convert.add((*input)[i], fmt::format("input[{}]", i))) return e;
    }
    r.input_messages = convert.take();
    return std::nullopt;
}

// OpenAI's hosted tools run on OpenAI's side, so the model here cannot call them. Agents send them
// whatever the server (Codex CLI sends web_search with every request): they are echoed and left
// out of the prompt rather than refused.
bool is_hosted_tool(const std::string& type) {
    for (const char* hosted : {"web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11", "file_search",
                               "code_interpreter", "image_generation", "computer_use_preview", "mcp"}) {
        if (type == hosted) return true;
    }
    return false;
}

// One function tool: echoed in the Responses form, rendered in the chat route's form.
std::optional<ApiError> add_function_tool(const ojson& t, const std::string& where, ojson& echo, ojson& for_template) {
    auto name = string_field(t, "name", where);
    if (!name) return name.error;
    if (name.value->empty()) return ApiError::invalid(where + ".name", fmt::format("{}.name: must not be empty", where));
    ojson parameters = {{"type", "object"}, {"properties", ojson::object()}};
    if (const ojson* p = field(t, "parameters")) {
        if (!p->is_object()) return ApiError::invalid(where + ".parameters", fmt::format("{}.parameters: expected a JSON schema object, got {}", where, shown(*p)));
        parameters = *p;
    }
    ojson description = nullptr;
    if (const ojson* d = field(t, "description")) {
        if (!d->is_string()) return ApiError::invalid(where + ".description", fmt::format("{}.description: expected a string, got {}", where, shown(*d)));
        description = *d;
    }
    ojson strict = nullptr;
    if (const ojson* s = field(t, "strict")) {
        if (!s->is_boolean()) return ApiError::invalid(where + ".strict", fmt::format("{}.strict: expected true or false, got {}", where, shown(*s)));
        strict = *s;
    }
    echo = {{"type", "function"}, {"name", *name.value}, {"description", description}, {"parameters", parameters}, {"strict", strict}};
    ojson fn = {{"name", *name.value}};
    if (!description.is_null()) fn["description"] = description;
    fn["parameters"] = std::move(parameters);
    for_template.push_back({{"type", "function"}, {"function", std::move(fn)}});
    return std::nullopt;
}

// Function tools in the form the templates and the output parser take (and as echoed). A
// namespace's functions are offered by their own names; a call to one names its namespace.
// Client-side tools of other kinds (custom grammars, shells) are refused: no parser reads them.
std::optional<ApiError> parse_tools(const ojson& body, ResponsesRequest& r) {
    const ojson* tools = field(body, "tools");
    if (!tools) return std::nullopt;
    if (!tools->is_array()) return ApiError::invalid("tools", fmt::format("tools: expected a list, got {}", shown(*tools)));
    ojson for_template = ojson::array();
    for (size_t i = 0; i < tools->size(); ++i) {
        const ojson& t = (*tools)[i];
        const std::string where = fmt::format("tools[{}]", i);
        if (!t.is_object()) return ApiError::invalid(where, fmt::format("{}: expected an object {{type, name, parameters}}, got {}", where, shown(t)));
        auto type = string_field(t, "type", where);
        if (!type) return type.error;
        if (*type.value == "function") {
            ojson echo;
            if (auto e = add_function_tool(t, where, echo, for_template)) return e;
            r.tools.push_back(std::move(echo));
        } else if (*type.value == "namespace") {
            auto ns = string_field(t, "name", where);
            if (!ns) return ns.error;
            const ojson* members = field(t, "tools");
            if (!members || !members->is_array()) {
                return ApiError::invalid(where + ".tools", fmt::format("{}.tools: expected a list of function tools, got {}", where, described(members)));
            }
            for (size_t k = 0; k < members->size(); ++k) {
                const std::string at = fmt::format("{}.tools[{}]", where, k);
                const ojson& m = (*members)[k];
                auto member_type = m.is_object() ? string_field(m, "type", at) : ApiResult<std::string>(std::string());
                if (!member_type || *member_type.value != "function") {
                    return ApiError::unsupported(at, fmt::format("{}: a namespace holds function tools here, got {}", at, shown(m)));
                }
                ojson echo;
                if (auto e = add_function_tool(m, at, echo, for_template)) return e;
                r.function_namespaces[echo["name"].get<std::string>()] = *ns.value;
            }
            r.tools.push_back(t);
        } else if (is_hosted_tool(*type.value)) {
            r.tools.push_back(t);
        } else {
            return ApiError::unsupported(where + ".type", fmt::format("{}.type: tools of type '{}' are not supported (send function tools)", where, *type.value));
        }
    }
    if (!for_template.empty()) r.generation.tools = std::move(for_template);
    return std::nullopt;
}

// "auto" keeps the tools; "none" leaves them out of the prompt (they are still echoed).
// "required" and a named function force a call: the reply is sampled under the grammar of a call
// to one of the tools (server/constrained_output.h), so even a small model makes one.
std::optional<ApiError> parse_tool_choice(const ojson& body, ResponsesRequest& r) {
    const ojson* choice = field(body, "tool_choice");
    if (!choice) return std::nullopt;
    const std::string c = choice->is_string() ? choice->get<std::string>() : "";
    if (c == "auto" || c == "none" || c == "required") {
        r.tool_choice = c;
        if (c == "none") r.generation.tools = nullptr;
        if (c != "required") return std::nullopt;
    } else if (const ojson* type = choice->is_object() ? field(*choice, "type") : nullptr; type && *type == "function") {
        const ojson* name = field(*choice, "name");
        if (!name || !name->is_string()) {
            return ApiError::invalid("tool_choice.name", fmt::format("tool_choice.name: expected the name of a function tool, got {}", described(name)));
        }
        r.tool_choice = {{"type", "function"}, {"name", *name}};
        r.generation.constraint = OutputConstraint::tool_call(name->get<std::string>());
    } else {
        return ApiError::invalid("tool_choice", fmt::format("tool_choice: expected \"auto\", \"none\", \"required\" or {{\"type\": \"function\", \"name\": ...}}, got {}", shown(*choice)));
    }
    if (r.generation.tools.is_null()) return ApiError::invalid("tool_choice", "tool_choice: a call is forced but the request offers no function tools; add them to tools");
    if (c == "required") r.generation.constraint = OutputConstraint::tool_call("");
    return std::nullopt;
}

// text.format: "text", or JSON output through constrained decoding (server/constrained_output.h),
// as the chat route's response_format: "json_object", or "json_schema" with the schema beside the
// type ({"type": "json_schema", "name", "schema", "strict"}; this API does not nest it). The format
// is echoed as sent. verbosity is echoed, not enforced.
std::optional<ApiError> parse_text(const ojson& body, ResponsesRequest& r) {
    const ojson* text = field(body, "text");
    if (!text) return std::nullopt;
    if (!text->is_object()) return ApiError::invalid("text", fmt::format("text: expected an object {{format, verbosity}}, got {}", shown(*text)));
    if (const ojson* format = field(*text, "format")) {
        const ojson* type = format->is_object() ? field(*format, "type") : nullptr;
        const std::string t = type && type->is_string() ? type->get<std::string>() : "";
        if (t != "text" && t != "json_object" && t != "json_schema") {
            return ApiError::invalid("text.format", fmt::format("text.format: expected {{\"type\": \"text\" | \"json_object\" | \"json_schema\"}}, got {}", shown(*format)));
        }
        if (t != "text" && r.generation.constraint.kind == OutputConstraint::Kind::ToolCall) {
            return ApiError::invalid("text.format", "text.format: a forced tool_choice already fixes the output; send one of them");
        }
        if (t == "json_object") r.generation.constraint.kind = OutputConstraint::Kind::JsonObject;
        if (t == "json_schema") {
            const ojson* schema = field(*format, "schema");
            if (!schema || !(schema->is_object() || schema->is_boolean())) {
                return ApiError::invalid("text.format.schema", fmt::format("text.format.schema: expected a JSON schema (an object), got {}", described(schema)));
            }
            const ojson* strict = field(*format, "strict");
            if (strict && !strict->is_boolean()) {
                return ApiError::invalid("text.format.strict", fmt::format("text.format.strict: expected true or false, got {}", shown(*strict)));
            }
            r.generation.constraint.kind = OutputConstraint::Kind::JsonSchema;
            r.generation.constraint.schema = *schema;
            r.generation.constraint.strict = strict && strict->get<bool>();
        }
        r.text["format"] = *format;
    }
    if (const ojson* verbosity = field(*text, "verbosity")) {
        if (!verbosity->is_string()) return ApiError::invalid("text.verbosity", fmt::format("text.verbosity: expected \"low\", \"medium\" or \"high\", got {}", shown(*verbosity)));
        r.text["verbosity"] = *verbosity;
    }
    return std::nullopt;
}

// reasoning.effort switches the template's thinking (enable_thinking, as Qwen3's templates read
// it): "none" and "minimal" off, the others on. The effort itself is not enforced.
std::optional<ApiError> parse_reasoning(const ojson& body, ResponsesRequest& r) {
    const ojson* reasoning = field(body, "reasoning");
    if (!reasoning) return std::nullopt;
    if (!reasoning->is_object()) return ApiError::invalid("reasoning", fmt::format("reasoning: expected an object {{effort, summary}}, got {}", shown(*reasoning)));
    for (const char* key : {"effort", "summary"}) {
        if (const ojson* v = field(*reasoning, key)) {
            if (!v->is_string()) return ApiError::invalid(fmt::format("reasoning.{}", key), fmt::format("reasoning.{}: expected a string, got {}", key, shown(*v)));
            r.reasoning[key] = *v;
        }
    }
    if (const ojson* effort = field(*reasoning, "effort")) {
        const std::string e = effort->get<std::string>();
        r.generation.template_kwargs["enable_thinking"] = !(e == "none" || e == "minimal");
    }
    return std::nullopt;
}

std::optional<ApiError> parse_metadata(const ojson& body, ResponsesRequest& r) {
    const ojson* meta = field(body, "metadata");
    if (!meta) return std::nullopt;
    if (!meta->is_object()) return ApiError::invalid("metadata", fmt::format("metadata: expected an object of strings, got {}", shown(*meta)));
    if (meta->size() > kMaxMetadataPairs) return ApiError::invalid("metadata", fmt::format("metadata: at most {} pairs, got {}", kMaxMetadataPairs, meta->size()));
    for (const auto& [key, value] : meta->items()) {
        if (key.size() > kMaxMetadataKey || !value.is_string() || value.get<std::string>().size() > kMaxMetadataValue) {
            return ApiError::invalid("metadata", fmt::format("metadata.{}: expected a key of at most {} characters and a string value of at most {}, got {}",
                                                             key, kMaxMetadataKey, kMaxMetadataValue, shown(value)));
        }
    }
    r.metadata = *meta;
    return std::nullopt;
}

// Features of OpenAI's platform that this server does not have: refused, so that a client does
// not take a plain answer for what it asked.
std::optional<ApiError> reject_unsupported(const ojson& body) {
    if (const ojson* bg = field(body, "background"); bg && !(bg->is_boolean() && !bg->get<bool>())) {
        return ApiError::unsupported("background", "background: background responses are not supported; leave it out (or false)");
    }
    for (const char* name : {"conversation", "prompt"}) {
        if (field(body, name)) return ApiError::unsupported(name, fmt::format("{}: stored {}s are not supported here; send the input items (or previous_response_id)", name, name));
    }
    return std::nullopt;
}

std::optional<ApiError> parse_generation_fields(const ojson& body, const SamplingParams& defaults, ResponsesRequest& r) {
    GenerationRequest& g = r.generation;
    if (auto e = parse_speculative(body, g.speculative)) return e;
    g.sampling = defaults;
    if (auto e = read_float(body, "temperature", 0.0, 2.0, g.sampling.temperature)) return e;
    if (auto e = read_float(body, "top_p", 0.0, 1.0, g.sampling.top_p)) return e;
    // No seed in this API: sampling differs from request to request, as OpenAI's does.
    g.sampling.seed = std::random_device{}() * 0x9E3779B97F4A7C15ull + std::random_device{}();
    if (auto e = read_int(body, "max_output_tokens", 1, std::numeric_limits<int32_t>::max(), r.max_output_tokens)) return e;
    g.max_tokens = r.max_output_tokens;
    if (auto e = read_bool(body, "stream", g.stream)) return e;
    if (auto e = read_bool(body, "store", r.store)) return e;
    if (auto e = read_bool(body, "parallel_tool_calls", r.parallel_tool_calls)) return e;
    if (auto e = parse_metadata(body, r)) return e;
    return reject_unsupported(body);
}

}  // namespace

ApiResult<ResponsesRequest> parse_responses_request(std::string_view text, const SamplingParams& defaults, ResponsesEndpoint endpoint) {
    auto body = parse_json_object(text);
    if (!body) return body.error;
    const ojson& j = *body.value;
    ResponsesRequest r;
    r.generation.endpoint = Endpoint::Chat;
    const bool create = endpoint == ResponsesEndpoint::Create;
    // Counting input tokens needs neither a model name nor input (the previous response's may do).
    const ojson* model = field(j, "model");
    if (!model && create) return ApiError::invalid("model", "model: required (any name: this server serves one model)", "missing_required_parameter");
    if (model && !model->is_string()) return ApiError::invalid("model", fmt::format("model: expected a string, got {}", shown(*model)));
    if (model) r.generation.model = model->get<std::string>();
    if (const ojson* instructions = field(j, "instructions")) {
        if (!instructions->is_string()) return ApiError::invalid("instructions", fmt::format("instructions: expected a string, got {}", shown(*instructions)));
        r.instructions = instructions->get<std::string>();
    }
    if (const ojson* prev = field(j, "previous_response_id")) {
        if (!prev->is_string() || prev->get<std::string>().empty()) {
            return ApiError::invalid("previous_response_id", fmt::format("previous_response_id: expected a response id \"resp_...\", got {}", shown(*prev)));
        }
        r.previous_response_id = prev->get<std::string>();
    }
    if (create || field(j, "input")) {
        if (auto e = parse_input(j, r)) return *e;
    }
    if (auto e = parse_tools(j, r)) return *e;
    if (auto e = parse_tool_choice(j, r)) return *e;
    if (auto e = parse_text(j, r)) return *e;
    if (auto e = parse_reasoning(j, r)) return *e;
    if (create) {
        if (auto e = parse_generation_fields(j, defaults, r)) return *e;
    }
    return r;
}

void assemble_messages(ResponsesRequest& r, const ojson* previous) {
    r.conversation = previous ? *previous : ojson::array();
    for (const auto& m : r.input_messages) r.conversation.push_back(m);
    ojson messages = ojson::array();
    if (r.instructions && !r.instructions->empty()) messages.push_back({{"role", "system"}, {"content", *r.instructions}});
    for (const auto& m : r.conversation) messages.push_back(m);
    r.generation.messages = std::move(messages);
}

std::optional<ApiError> check_responses_context(int64_t n_prompt, std::optional<int64_t> max_output_tokens, int64_t n_ctx) {
    if (n_prompt >= n_ctx) {
        return ApiError{400,
                        fmt::format("the input is {} tokens, {} more than the context of {} tokens leaves room for (at least one token "
                                    "must be generated): shorten the input, or restart the server with a larger --ctx-size",
                                    n_prompt, n_prompt - n_ctx + 1, n_ctx),
                        "invalid_request_error", "context_length_exceeded", "input"};
    }
    if (max_output_tokens && n_prompt + *max_output_tokens > n_ctx) {
        return ApiError{400,
                        fmt::format("max_output_tokens is {} but the input ({} tokens) leaves room for only {} in the context of {}: "
                                    "ask for at most {}",
                                    *max_output_tokens, n_prompt, n_ctx - n_prompt, n_ctx, n_ctx - n_prompt),
                        "invalid_request_error", "context_length_exceeded", "max_output_tokens"};
    }
    return std::nullopt;
}

ApiError response_not_found(const std::string& given, const std::string& param) {
    // Ids are ASCII; anything else (a path's bytes need not be UTF-8) is not echoed as it came.
    std::string id = given.substr(0, 128);
    for (char& ch : id) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '?';
    }
    return ApiError{404,
                    fmt::format("no response with id '{}': it was never stored (store: false), was deleted, or was evicted from this "
                                "server's bounded store; send the conversation as input items instead",
                                id),
                    "invalid_request_error", "not_found", param};
}

std::string make_responses_id(std::string_view prefix) {
    static constexpr char kHex[] = "0123456789abcdef";
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string id(prefix);
    id += '_';
    for (int half = 0; half < 3; ++half) {
        uint64_t bits = rng();
        for (int i = 0; i < 16; ++i, bits >>= 4) id += kHex[bits & 15];
    }
    return id;
}

nlohmann::json responses_usage_json(const Usage& u, int64_t reasoning_tokens) {
    return {{"input_tokens", u.prompt_tokens},
            {"input_tokens_details", {{"cached_tokens", u.cached_tokens}}},
            {"output_tokens", u.completion_tokens},
            {"output_tokens_details", {{"reasoning_tokens", reasoning_tokens}}},
            {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

nlohmann::json response_json(const ResponsesRequest& r, const ResponseState& s) {
    using json = nlohmann::json;
    const GenerationRequest& g = r.generation;
    const bool incomplete = s.status == "incomplete";
    // Settings are floats: echoed rounded, so that 0.95 reads 0.95 and not 0.949999988.
    auto echoed = [](float v) { return std::round(static_cast<double>(v) * 1e6) / 1e6; };
    return {{"id", s.id},
            {"object", "response"},
            {"created_at", s.created_at},
            {"status", s.status},
            {"background", false},
            {"error", s.error ? json{{"code", "server_error"}, {"message", s.error->message}} : json(nullptr)},
            // The one limit this server ends a reply on: max_output_tokens, or the context's end.
            {"incomplete_details", incomplete ? json{{"reason", "max_output_tokens"}} : json(nullptr)},
            {"instructions", r.instructions ? json(*r.instructions) : json(nullptr)},
            {"max_output_tokens", r.max_output_tokens ? json(*r.max_output_tokens) : json(nullptr)},
            {"metadata", r.metadata},
            {"model", g.model},
            {"output", s.output},
            {"parallel_tool_calls", r.parallel_tool_calls},
            {"previous_response_id", r.previous_response_id.empty() ? json(nullptr) : json(r.previous_response_id)},
            {"reasoning", r.reasoning},
            {"store", r.store},
            {"temperature", echoed(g.sampling.temperature)},
            {"text", r.text},
            {"tool_choice", r.tool_choice},
            {"tools", r.tools},
            {"top_p", echoed(g.sampling.top_p)},
            {"truncation", "disabled"},
            {"usage", s.usage ? responses_usage_json(*s.usage, s.reasoning_tokens) : json(nullptr)}};
}

}  // namespace strata::server
