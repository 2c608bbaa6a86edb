#pragma once
// Which output syntax a model family uses for reasoning and tool calls, recognised from its chat
// template, plus the one table that describes each syntax (markers, how a call block ends, how
// its body is parsed). The streaming parser (tool_call_parser.h) is driven by this table, so a new
// family is one enum value, one detection rule and one table row (and a body parser if new).
//
//   ChatFormat f = detect_chat_format(template_source);     // e.g. ChatFormat::Hermes
//   const FormatSyntax& s = format_syntax(f);                // s.think_open == "<think>"
//   bool forced = prompt_opens_thinking(f, rendered_prompt); // generation starts inside <think>

#include <string>
#include <string_view>
#include <vector>

namespace strata::tool_calls {

enum class ChatFormat {
    Generic,       // no tool-call syntax known; a leading <think>…</think> is still split out
    Hermes,        // Qwen3, QwQ, Qwen2.5, Hermes 2/3: <tool_call>{"name":…,"arguments":…}</tool_call>
    Qwen3Coder,    // Qwen3-Coder, Qwen3.5: <tool_call><function=f><parameter=p>v</parameter>…
    DeepSeekR1,    // R1 and its distills: <｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{…}\n```
    DeepSeekV31,   // V3.1: <｜tool▁call▁begin｜>f<｜tool▁sep｜>{…}<｜tool▁call▁end｜>
    DeepSeekV32,   // V3.2 "DSML": <｜DSML｜invoke name="f"><｜DSML｜parameter name="p" string="…">
    Llama3,        // Llama 3.1/3.2/3.3: a bare {"name":…,"parameters":…}, or <|python_tag|>…
    FireFunctionV2,  // firefunction-v2 (Llama 3 based): " functools[{"name":…,"arguments":…}, …]"
    MistralNemo,   // [TOOL_CALLS][{"name":…,"arguments":…,"id":…}, …]
    Mistral,       // Devstral, Mistral-Small-3.2, Ministral: [TOOL_CALLS]f[CALL_ID]id[ARGS]{…}, [THINK]
    GptOss,        // harmony channels: analysis / commentary to=functions.f / final
    Glm45,         // GLM-4.5/4.6: <tool_call>f\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>…
};

std::string_view chat_format_name(ChatFormat format);

// Recognises the family from marker strings that only its template writes. Generic when nothing
// matches; the server can still serve the model, it just gets no tool calls parsed.
ChatFormat detect_chat_format(std::string_view template_source);

// How the text of one call block is turned into calls (call_bodies.h).
enum class BodyKind {
    HermesJson,    // {"name": f, "arguments": {…}} (also "parameters")
    QwenXml,       // <function=f><parameter=p>\nv\n</parameter></function>
    GlmXml,        // f\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>
    DeepSeek,      // R1 (type<｜tool▁sep｜>f + fenced json) and V3.1 (f<｜tool▁sep｜>json)
    Dsml,          //  name="f">\n<｜DSML｜parameter name="p" string="true|false">v</｜DSML｜parameter>
    MistralCalls,  // [{…}, …] or f[ARGS]{…} or f[CALL_ID]id[ARGS]{…}
    JsonCallArray, // [{"name": f, "arguments": {…}}, …] (firefunction)
    LlamaJson,     // {"name": f, "parameters": {…}} standing alone at the start of the output
    PythonTag,     // after <|python_tag|>: f.call(k="v"), a JSON call, or raw code_interpreter code
};

struct CallSyntax {
    std::string_view open;   // marker that starts the block in content ("" = JSON at start)
    std::string_view close;  // marker that ends it; "" = the block ends where its JSON value closes
    BodyKind body;
    bool ends_at_eos = false;  // the model may simply stop instead of writing `close`
};

struct FormatSyntax {
    ChatFormat format;
    std::string_view think_open;   // "" = the family has no reasoning markers
    std::string_view think_close;
    std::vector<CallSyntax> calls;
    // Markers that only group calls (<｜tool▁calls▁begin｜>, <｜DSML｜function_calls>); they are
    // dropped from content.
    std::vector<std::string_view> group_markers;
    // Llama 3.x writes a call as a bare JSON object at the start of the output (several may
    // follow, separated by ';' or whitespace). An answer that starts with '{' is therefore held
    // until its JSON closes, then released as content if it is not shaped like a call.
    const CallSyntax* json_call_at_start = nullptr;
    // Mistral templates reject tool call ids that are not 9 alphanumeric characters.
    bool short_alnum_ids = false;
};

const FormatSyntax& format_syntax(ChatFormat format);

// Every marker a streaming parser of `format` may hold back (for tests and for the server's stop
// logic): reasoning, call, group markers, and gpt-oss's channel tokens.
std::vector<std::string_view> format_markers(ChatFormat format);

// Whether the rendered prompt leaves the model inside a reasoning block (it ends with the open
// marker, as Qwen3.5 "<think>\n", R1 "<think>\n" or V3.1 thinking mode "<think>" do); pass the
// answer as ParserOptions::thinking_forced_open.
bool prompt_opens_thinking(ChatFormat format, std::string_view rendered_prompt);

}  // namespace strata::tool_calls
