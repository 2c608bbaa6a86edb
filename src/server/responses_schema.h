#pragma once
// The OpenAI Responses API as the server speaks it (POST /v1/responses and
// /v1/responses/input_tokens): request bodies parsed and validated into the GenerationRequest the
// chat route builds (input items become the messages the chat templates take: system, user,
// assistant with tool_calls and reasoning_content, tool), the request's settings kept to be echoed
// in the response object, the context check in this API's field names, and the response object
// itself. Errors are OpenAI's shape (ApiError). The output items are built by responses_items.h.
//
//   auto req = parse_responses_request(body, defaults, ResponsesEndpoint::Create);
//   if (!req) return reply_error(res, req.error);
//   assemble_messages(*req.value, stored ? &stored->conversation : nullptr);
//   ... prepare_prompt(ctx, req.value->generation) ...
//   body = response_json(*req.value, ResponseState{.id = ..., .status = "completed", .output = items.output(), ...});

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/openai_schema.h"

namespace strata::server {

enum class ResponsesEndpoint {
    Create,       // POST /v1/responses
    InputTokens,  // POST /v1/responses/input_tokens: the prompt only, no generation fields
};

struct ResponsesRequest {
    // What the engine runs: model, sampling, max_tokens (max_output_tokens), stream, tools (null
    // with tool_choice "none"), template_kwargs; messages once assemble_messages has run.
    GenerationRequest generation;
    // This request's input items as chat messages, without the instructions.
    nlohmann::ordered_json input_messages = nlohmann::ordered_json::array();
    std::optional<std::string> instructions;
    std::string previous_response_id;
    // The conversation this request continues plus its input: what a later request that names
    // this one continues (instructions are not carried over, as OpenAI's API does).
    nlohmann::ordered_json conversation = nlohmann::ordered_json::array();

    // Echoed in the response object as the client sent them (or the defaults applied).
    nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // Responses form: {type, name, description, parameters, strict}
    // The namespace of each function offered from a "namespace" tool (its calls name it).
    std::map<std::string, std::string> function_namespaces;
    nlohmann::ordered_json tool_choice = "auto";
    nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
    nlohmann::ordered_json text = {{"format", {{"type", "text"}}}};
    nlohmann::ordered_json reasoning = {{"effort", nullptr}, {"summary", nullptr}};
    std::optional<int64_t> max_output_tokens;
    bool store = true;
    bool parallel_tool_calls = true;
};

// Any `model` name is accepted and echoed (one model is served). tool_choice "required" or a named
// function, and text.format json_object / json_schema, constrain the output (constrained decoding,
// server/constrained_output.h); only one of them may be given.
ApiResult<ResponsesRequest> parse_responses_request(std::string_view body, const SamplingParams& defaults,
                                                    ResponsesEndpoint endpoint);

// generation.messages = [instructions as a system message] + previous conversation + input;
// `conversation` = previous conversation + input. `previous`: the stored conversation of
// previous_response_id (null: none).
void assemble_messages(ResponsesRequest& r, const nlohmann::ordered_json* previous);

// The prompt and max_output_tokens against the context, with this API's field names.
std::optional<ApiError> check_responses_context(int64_t n_prompt, std::optional<int64_t> max_output_tokens, int64_t n_ctx);

// 404 for an id the store does not hold (never stored, evicted or deleted); `param` names the
// field that carried it (empty for a path).
ApiError response_not_found(const std::string& id, const std::string& param);

// "resp_", "msg_", "fc_", "rs_" identifiers.
std::string make_responses_id(std::string_view prefix);

// Where a response stands, with what the settings alone do not say.
struct ResponseState {
    std::string id;
    int64_t created_at = 0;
    std::string status = "in_progress";  // in_progress, completed, incomplete, failed
    nlohmann::json output = nlohmann::json::array();
    std::optional<Usage> usage;           // absent until the end
    int64_t reasoning_tokens = 0;
    std::optional<ApiError> error;        // status "failed"
};
nlohmann::json responses_usage_json(const Usage& u, int64_t reasoning_tokens);
nlohmann::json response_json(const ResponsesRequest& r, const ResponseState& s);

}  // namespace strata::server
