#pragma once
// The OpenAI API as the server speaks it: request bodies parsed and validated into our structs
// (every refusal an ApiError with the HTTP status and the OpenAI error shape), and the response
// and stream-chunk bodies built from our results.
//
//   auto req = parse_chat_request(body, defaults, "qwen3");
//   if (!req) return reply(req.error.http_status, req.error.to_json());
//   int64_t max_tokens = 0;
//   if (auto e = check_context_budget(n_prompt, req.value->max_tokens, n_ctx, max_tokens)) return reply(*e);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/sampler.h"
#include "runtime/speculative.h"

namespace strata::server {

// An error as the OpenAI API reports it: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
    int http_status = 400;
    std::string message;
    std::string type = "invalid_request_error";
    std::string code;   // machine-readable: "invalid_json", "model_not_found", "context_length_exceeded", ...
    std::string param;  // the request field at fault, when there is one

    nlohmann::json to_json() const;
    static ApiError invalid(std::string param, std::string message, std::string code = "invalid_value");
    static ApiError unsupported(std::string param, std::string message);
};

// A value or the ApiError that explains why there is none.
template <typename T>
struct ApiResult {
    ApiResult(T v) : value(std::move(v)) {}         // NOLINT: implicit by design
    ApiResult(ApiError e) : error(std::move(e)) {}  // NOLINT: implicit by design
    explicit operator bool() const { return value.has_value(); }
    std::optional<T> value;
    ApiError error;
};

enum class Endpoint { Chat, Completion };

// What the output must be, from response_format, grammar or a forced tool_choice
// (server/constrained_output.h turns it into the grammar sampled under).
struct OutputConstraint {
    enum class Kind { None, Grammar, JsonObject, JsonSchema, ToolCall };
    Kind kind = Kind::None;
    std::string grammar;          // Grammar: GBNF text, root rule "root"
    nlohmann::ordered_json schema;  // JsonSchema (ordered: properties are written in the client's order)
    bool strict = true;           // JsonSchema: objects take no members beyond their properties unless they say so
    std::string tool_name;        // ToolCall: the function to call; empty: any of the request's tools

    static OutputConstraint tool_call(std::string name) {
        OutputConstraint c;
        c.kind = Kind::ToolCall;
        c.tool_name = std::move(name);
        return c;
    }
};

// One generation request, from either endpoint, before tokenization.
// The "speculative" field: absent (the server's setting), false / true (off / on), or
// {"mode": "auto" | "lookup" | "none", "max": K}.
struct SpeculativeChoice {
    bool given = false;
    std::optional<DraftMode> mode;
    std::optional<int64_t> max;
};

struct GenerationRequest {
    Endpoint endpoint = Endpoint::Chat;
    std::string model;

    // /v1/chat/completions: messages normalized for the template (content parts joined into a
    // string, tool-call arguments parsed into objects), tools (null when absent or disabled) and
    // extra template variables (chat_template_kwargs).
    nlohmann::ordered_json messages;
    nlohmann::ordered_json tools;
    nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();

    // /v1/completions: the prompt as text, or as token ids when the client sent ids.
    std::string prompt_text;
    std::vector<int32_t> prompt_tokens;
    bool prompt_is_tokens = false;

    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    SamplingParams sampling;
    bool seed_given = false;
    std::optional<int64_t> max_tokens;  // absent: up to the end of the context
    std::vector<std::string> stop;
    bool ignore_eos = false;  // extension (as llama.cpp's server): generate past end-of-generation tokens
    OutputConstraint constraint;
    SpeculativeChoice speculative;  // extension: the request's speculative decoding (server/speculative_request.h)
};

// The "model" field, when one model is served: clients and agents send whatever name they were
// configured with, so any name is accepted (and echoed back). With `strict` (serve
// --strict-model-name) a name other than `served` is refused with 404.
struct ModelNameRule {
    std::string served;  // the name GET /v1/models lists
    bool strict = false;
};
// The 404 for a name the rule refuses, in OpenAI's shape (the Anthropic routes translate it).
std::optional<ApiError> check_model_name(const std::string& requested, const ModelNameRule& rule);

// `defaults`: the sampling values used for fields the client leaves out.
ApiResult<GenerationRequest> parse_chat_request(std::string_view body, const SamplingParams& defaults,
                                                const ModelNameRule& model);
ApiResult<GenerationRequest> parse_completion_request(std::string_view body, const SamplingParams& defaults,
                                                      const ModelNameRule& model);

// Checks that the prompt and the requested tokens fit in the context and sets `max_tokens` to
// the number to generate (the rest of the context when the client asked for no limit).
std::optional<ApiError> check_context_budget(int64_t n_prompt, std::optional<int64_t> requested, int64_t n_ctx,
                                             int64_t& max_tokens);

// ---- responses -------------------------------------------------------------------------------

struct Usage {
    int64_t prompt_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t cached_tokens = 0;     // prompt tokens whose KV was reused from an earlier request
    double prompt_seconds = 0.0;
    double generation_seconds = 0.0;
};

// What every response and chunk of one request repeats.
struct ResponseMeta {
    std::string id;  // "chatcmpl-…" or "cmpl-…"
    int64_t created = 0;
    std::string model;
};
ResponseMeta make_response_meta(Endpoint endpoint, const std::string& model);

// The assistant's reply (or one streamed piece of it) split by the output parser.
struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  // JSON text
};
struct ChatMessageOut {
    std::string content;
    std::string reasoning;
    std::vector<ToolCall> tool_calls;
};

nlohmann::json usage_json(const Usage& u);
// Speeds in the llama.cpp "timings" shape, which the web page shows.
nlohmann::json timings_json(const Usage& u);
nlohmann::json chat_response(const ResponseMeta& meta, const ChatMessageOut& message, std::string_view finish_reason,
                             const Usage& usage);
// `delta`: {"role"}, {"content"}, {"reasoning_content"} or {"tool_calls"}; finish_reason null when empty.
nlohmann::json chat_chunk(const ResponseMeta& meta, const nlohmann::json& delta, std::string_view finish_reason);
nlohmann::json completion_response(const ResponseMeta& meta, const std::string& text, std::string_view finish_reason,
                                   const Usage& usage);
nlohmann::json completion_chunk(const ResponseMeta& meta, const std::string& text, std::string_view finish_reason);
// The last chunk of a stream with stream_options.include_usage: no choices, only usage.
nlohmann::json usage_chunk(const ResponseMeta& meta, Endpoint endpoint, const Usage& usage);
nlohmann::json models_list(const std::string& model_id, int64_t created, int64_t n_ctx);

}  // namespace strata::server
