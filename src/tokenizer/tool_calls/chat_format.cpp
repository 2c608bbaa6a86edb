#include "tokenizer/tool_calls/chat_format.h"


namespace strata::tool_calls {
namespace {

bool has(std::string_view text, std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
}

// DeepSeek's markers use U+FF5C (fullwidth vertical bar) and U+2581 (lower one-eighth block).
constexpr std::string_view kDsCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDsCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDsCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDsCallEnd = "<｜tool▁call▁end｜>";

const CallSyntax kLlamaJsonAtStart{"", "", BodyKind::LlamaJson};

std::vector<FormatSyntax> build_table() {
    std::vector<FormatSyntax> t;
    t.push_back({ChatFormat::Generic, "<think>", "</think>", {}, {}});
    t.push_back({ChatFormat::Hermes, "<think>", "</think>",
                 {{"<tool_call>", "</tool_call>", BodyKind::HermesJson}}, {}});
    t.push_back({ChatFormat::Qwen3Coder, "<think>", "</think>",
                 {{"<tool_call>", "</tool_call>", BodyKind::QwenXml}}, {}});
    t.push_back({ChatFormat::DeepSeekR1, "<think>", "</think>",
                 {{kDsCallBegin, kDsCallEnd, BodyKind::DeepSeek}}, {kDsCallsBegin, kDsCallsEnd}});
    t.push_back({ChatFormat::DeepSeekV31, "<think>", "</think>",
                 {{kDsCallBegin, kDsCallEnd, BodyKind::DeepSeek}}, {kDsCallsBegin, kDsCallsEnd}});
    t.push_back({ChatFormat::DeepSeekV32, "<think>", "</think>",
                 {{"<｜DSML｜invoke", "</｜DSML｜invoke>", BodyKind::Dsml}},
                 {"<｜DSML｜function_calls>", "</｜DSML｜function_calls>"}});
    // <|eom_id|> ends a built-in call when the server passes it through; usually it is a stop
    // token and the call simply runs to the end of the output.
    t.push_back({ChatFormat::Llama3, "", "",
                 {{"<|python_tag|>", "<|eom_id|>", BodyKind::PythonTag, /*ends_at_eos=*/true}}, {}});
    t.back().json_call_at_start = &kLlamaJsonAtStart;
    t.push_back({ChatFormat::FireFunctionV2, "", "", {{"functools", "", BodyKind::JsonCallArray}}, {}});
    t.push_back({ChatFormat::MistralNemo, "[THINK]", "[/THINK]",
                 {{"[TOOL_CALLS]", "", BodyKind::MistralCalls}}, {}});
    t.back().short_alnum_ids = true;
    t.push_back({ChatFormat::Mistral, "[THINK]", "[/THINK]",
                 {{"[TOOL_CALLS]", "", BodyKind::MistralCalls}}, {}});
    t.back().short_alnum_ids = true;
    // gpt-oss is driven by its channel headers (tool_call_parser.cpp), not by this table.
    t.push_back({ChatFormat::GptOss, "", "", {}, {}});
    t.push_back({ChatFormat::Glm45, "<think>", "</think>",
                 {{"<tool_call>", "</tool_call>", BodyKind::GlmXml}}, {}});
    return t;
}

}  // namespace

std::string_view chat_format_name(ChatFormat format) {
    switch (format) {
        case ChatFormat::Generic: return "generic";
        case ChatFormat::Hermes: return "hermes";
        case ChatFormat::Qwen3Coder: return "qwen3-coder";
        case ChatFormat::DeepSeekR1: return "deepseek-r1";
        case ChatFormat::DeepSeekV31: return "deepseek-v3.1";
        case ChatFormat::DeepSeekV32: return "deepseek-v3.2";
        case ChatFormat::Llama3: return "llama3";
        case ChatFormat::FireFunctionV2: return "firefunction-v2";
        case ChatFormat::MistralNemo: return "mistral-nemo";
        case ChatFormat::Mistral: return "mistral";
        case ChatFormat::GptOss: return "gpt-oss";
        case ChatFormat::Glm45: return "glm-4.5";
    }
    return "unknown";
}

ChatFormat detect_chat_format(std::string_view src) {
    // Order matters: several templates contain another family's marker too (Qwen3.5 and GLM
    // also write <tool_call>), so the most specific markers are tested first.
    if (has(src, "<|channel|>") && has(src, "<|message|>")) return ChatFormat::GptOss;
    if (has(src, "｜DSML｜")) return ChatFormat::DeepSeekV32;
    if (has(src, kDsCallsBegin)) {
        // R1 writes the call type before the separator and fences the arguments as ```json.
        return has(src, "```json") ? ChatFormat::DeepSeekR1 : ChatFormat::DeepSeekV31;
    }
    if (has(src, "<｜Assistant｜>")) return ChatFormat::DeepSeekR1;  // R1 without tool support
    if (has(src, "<arg_key>")) return ChatFormat::Glm45;
    if (has(src, "<function=") && has(src, "<parameter=")) return ChatFormat::Qwen3Coder;
    if (has(src, "<tool_call>")) return ChatFormat::Hermes;
    if (has(src, "[TOOL_CALLS][")) return ChatFormat::MistralNemo;
    if (has(src, "[TOOL_CALLS]")) return ChatFormat::Mistral;
    if (has(src, "functools[")) return ChatFormat::FireFunctionV2;
    if (has(src, "<|start_header_id|>")) return ChatFormat::Llama3;
    return ChatFormat::Generic;
}

const FormatSyntax& format_syntax(ChatFormat format) {
    static const std::vector<FormatSyntax> table = build_table();
    for (const FormatSyntax& s : table) {
        if (s.format == format) return s;
    }
    return table.front();
}

std::vector<std::string_view> format_markers(ChatFormat format) {
    if (format == ChatFormat::GptOss) {
        return {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>",
                "<|constrain|>"};
    }
    const FormatSyntax& s = format_syntax(format);
    std::vector<std::string_view> out;
    if (!s.think_open.empty()) {
        out.push_back(s.think_open);
        out.push_back(s.think_close);
    }
    for (const CallSyntax& c : s.calls) {
        out.push_back(c.open);
        if (!c.close.empty()) out.push_back(c.close);
    }
    for (std::string_view g : s.group_markers) out.push_back(g);
    return out;
}

bool prompt_opens_thinking(ChatFormat format, std::string_view prompt) {
    const FormatSyntax& s = format_syntax(format);
    if (s.think_open.empty()) return false;
    while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ' || prompt.back() == '\r' ||
                               prompt.back() == '\t')) {
        prompt.remove_suffix(1);
    }
    return prompt.size() >= s.think_open.size() &&
           prompt.substr(prompt.size() - s.think_open.size()) == s.think_open;
}

}  // namespace strata::tool_calls
