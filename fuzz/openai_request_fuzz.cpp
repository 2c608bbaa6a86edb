// libFuzzer target for the server's request parsing, OpenAI's (server/openai_schema.h) and
// Anthropic's (server/anthropic_schema.h): any request body must parse or be refused with an API
// error — never crash, hang or exhaust memory (bodies come from clients). A body that parses must
// also pass the context budget check without a crash, and a budget the check accepts must fit the
// context.
//   run: build-fuzz/bin/openai_request_fuzz WORK_DIR fuzz/corpus/openai -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/anthropic_schema.h"
#include "server/openai_schema.h"

namespace {

void check_budget(const strata::server::GenerationRequest& request) {
    for (const int64_t n_prompt : {int64_t{1}, int64_t{4000}}) {
        int64_t max_tokens = -1;
        const auto error = strata::server::check_context_budget(n_prompt, request.max_tokens, 4096, max_tokens);
        if (!error && (max_tokens < 0 || n_prompt + max_tokens > 4096)) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const strata::SamplingParams defaults;
    if (auto chat = strata::server::parse_chat_request(body, defaults, "strata")) check_budget(*chat.value);
    if (auto completion = strata::server::parse_completion_request(body, defaults, "strata")) check_budget(*completion.value);
    using strata::server::MessagesEndpoint;
    if (auto messages = strata::server::parse_messages_request(body, defaults, MessagesEndpoint::Create)) check_budget(*messages.value);
    strata::server::parse_messages_request(body, defaults, MessagesEndpoint::CountTokens);
    return 0;
}
