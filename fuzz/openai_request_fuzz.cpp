// libFuzzer target for the server's request parsing, OpenAI's (server/openai_schema.h, and the
// Responses API's server/responses_schema.h) and Anthropic's (server/anthropic_schema.h): any
// request body must parse or be refused with an API error — never crash, hang or exhaust memory
// (bodies come from clients). A body that parses must also pass the context budget check without a
// crash, and a budget the check accepts must fit the context; a Responses body must also assemble
// its messages (once as the continuation of its own input) and build its response object.
//   run: build-fuzz/bin/openai_request_fuzz WORK_DIR fuzz/corpus/openai -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/anthropic_schema.h"
#include "server/openai_schema.h"
#include "server/responses_schema.h"

namespace {

void check_budget(const strata::server::GenerationRequest& request) {
    for (const int64_t n_prompt : {int64_t{1}, int64_t{4000}}) {
        int64_t max_tokens = -1;
        const auto error = strata::server::check_context_budget(n_prompt, request.max_tokens, 4096, max_tokens);
        if (!error && (max_tokens < 0 || n_prompt + max_tokens > 4096)) std::abort();
    }
}

void check_responses(strata::server::ResponsesRequest& request) {
    using namespace strata::server;
    const nlohmann::ordered_json previous = request.input_messages;
    assemble_messages(request, &previous);
    if (request.conversation.size() != 2 * previous.size()) std::abort();
    for (const int64_t n_prompt : {int64_t{1}, int64_t{4000}}) {
        if (!check_responses_context(n_prompt, request.max_output_tokens, 4096) && request.max_output_tokens &&
            n_prompt + *request.max_output_tokens > 4096) {
            std::abort();
        }
    }
    response_json(request, ResponseState{}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const strata::SamplingParams defaults;
    if (auto chat = strata::server::parse_chat_request(body, defaults, {"strata", true})) check_budget(*chat.value);
    if (auto completion = strata::server::parse_completion_request(body, defaults, {"strata", true})) check_budget(*completion.value);
    using strata::server::MessagesEndpoint;
    if (auto messages = strata::server::parse_messages_request(body, defaults, MessagesEndpoint::Create)) check_budget(*messages.value);
    strata::server::parse_messages_request(body, defaults, MessagesEndpoint::CountTokens);
    using strata::server::ResponsesEndpoint;
    if (auto responses = strata::server::parse_responses_request(body, defaults, ResponsesEndpoint::Create)) check_responses(*responses.value);
    if (auto counting = strata::server::parse_responses_request(body, defaults, ResponsesEndpoint::InputTokens)) check_responses(*counting.value);
    return 0;
}
