// libFuzzer target for the chat template engine: any template source must parse and render, or
// fail with an error — never crash, hang or exhaust memory (templates come inside model files).
//   run: build-fuzz/bin/chat_template_fuzz WORK_DIR ../shared/testdata/chat-templates -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tokenizer/chat_template/template.h"

namespace {
const nlohmann::ordered_json& variables() {
    static const nlohmann::ordered_json vars = nlohmann::ordered_json::parse(R"({
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "f", "arguments": {"x": 1}}}], "reasoning_content": "hmm"},
            {"role": "tool", "tool_call_id": "c1", "content": "42"}
        ],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}],
        "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true, "enable_thinking": false
    })");
    return vars;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string source(reinterpret_cast<const char*>(data), size);
    auto parsed = strata::chat_template::ChatTemplate::parse(std::move(source));
    if (!parsed) return 0;
    strata::chat_template::RenderOptions options;
    options.now = "2026-01-15T00:00:00";
    auto rendered = parsed->render(variables(), options);
    (void)rendered;
    return 0;
}
