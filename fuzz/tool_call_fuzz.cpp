// libFuzzer target for the streaming tool-call parser (tokenizer/tool_calls/tool_call_parser.h):
// any model output, in any family's syntax, fed in pieces of any size, must parse without a crash
// or a hang, and keep the parser's promise: the final message is exactly what the deltas sent
// (content and reasoning are the concatenations of the deltas', every call was sent once, whole).
// The first input byte picks the family and the options, the second how the rest is cut into
// pieces.
//   run: build-fuzz/bin/tool_call_fuzz WORK_DIR fuzz/corpus/tool_calls -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tool_calls/tool_call_parser.h"

namespace {

using namespace strata::tool_calls;

constexpr ChatFormat kFormats[] = {ChatFormat::Generic,     ChatFormat::Hermes,      ChatFormat::Qwen3Coder,
                                   ChatFormat::DeepSeekR1,  ChatFormat::DeepSeekV31, ChatFormat::DeepSeekV32,
                                   ChatFormat::Llama3,      ChatFormat::FireFunctionV2, ChatFormat::MistralNemo,
                                   ChatFormat::Mistral,     ChatFormat::GptOss,      ChatFormat::Glm45};

const nlohmann::ordered_json& tools() {
    static const nlohmann::ordered_json t = nlohmann::ordered_json::parse(R"([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}, "celsius": {"type": "boolean"},
            "ratio": {"type": "number"}, "extra": {"type": "object"}, "tags": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {
            "code": {"type": "string"}}}}}
    ])");
    return t;
}

void require(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const uint8_t pick = data[0];
    uint32_t cut = data[1] | 1u;  // a small generator for the piece sizes
    const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

    ParserOptions options;
    options.format = kFormats[pick % std::size(kFormats)];
    options.thinking_forced_open = (pick & 0x10) != 0;
    options.split_reasoning = (pick & 0x20) == 0;
    options.parse_tool_calls = (pick & 0x40) == 0;
    if ((pick & 0x80) == 0) options.tools = tools();
    options.id_seed = cut;

    ToolCallParser parser(options);
    std::string content, reasoning;
    std::vector<ToolCallDelta> calls;
    auto collect = [&](const MessageDelta& d) {
        content += d.content;
        reasoning += d.reasoning_content;
        calls.insert(calls.end(), d.tool_calls.begin(), d.tool_calls.end());
    };
    for (size_t at = 0; at < text.size();) {
        cut = cut * 1103515245u + 12345u;
        const size_t n = 1 + (cut >> 16) % 16;
        collect(parser.feed(text.substr(at, n)));
        at += n;
    }
    const ToolCallParser::Finished done = parser.finish();
    collect(done.delta);

    const ParsedMessage& m = done.message;
    require(m.content == content);
    require(m.reasoning_content == reasoning);
    require(m.tool_calls.size() == calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
        require(calls[i].index == static_cast<int>(i));
        require(calls[i].id == m.tool_calls[i].id && calls[i].name == m.tool_calls[i].name &&
                calls[i].arguments == m.tool_calls[i].arguments);
        // Arguments are sent whole and validated: a JSON object.
        const auto args = nlohmann::json::parse(m.tool_calls[i].arguments, nullptr, false);
        require(!args.is_discarded() && args.is_object());
    }
    return 0;
}
