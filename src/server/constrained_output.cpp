#include "server/constrained_output.h"

#include <fmt/format.h>

#include "runtime/json_schema_grammar.h"

namespace strata::server {

namespace {

using tool_calls::ChatFormat;

// When the prompt leaves the model inside its reasoning block, the block is closed before the
// call. A block the model would open itself is not offered: a small model given the choice
// reasons until the budget ends.
std::string think_prefix(ChatFormat format, bool thinking_open) {
    const tool_calls::FormatSyntax& s = tool_calls::format_syntax(format);
    if (s.think_open.empty() || !thinking_open) return "";
    return "[^<]* \"" + std::string(s.think_close) + "\" ws ";
}

}  // namespace

ChatFormat forced_call_format(ChatFormat model_format) {
    return model_format == ChatFormat::Generic ? ChatFormat::Hermes : model_format;
}

ApiResult<std::string> tool_call_gbnf(ChatFormat format, const nlohmann::ordered_json& tools, const std::string& name,
                                      bool thinking_open) {
    const std::string think = think_prefix(format, thinking_open);
    format = forced_call_format(format);
    std::string arguments_key;
    std::string open, close;
    switch (format) {
        case ChatFormat::Hermes:
            arguments_key = "arguments";
            open = "\"<tool_call>\" ws ";
            close = " ws \"</tool_call>\"";
            break;
        case ChatFormat::Llama3:
            arguments_key = "parameters";
            break;
        default:
            return ApiError::unsupported("tool_choice", fmt::format("tool_choice: forcing a tool call is not supported yet for this model's "
                                                                    "tool-call format ({}); send tool_choice \"auto\"",
                                                                    tool_calls::chat_format_name(format)));
    }
    if (!tools.is_array() || tools.empty()) {
        return ApiError::invalid("tool_choice", "tool_choice: forcing a tool call needs tools; send the tools the model may call");
    }
    std::string rules, alternatives;
    bool found = false;
    for (size_t i = 0; i < tools.size(); ++i) {
        const auto& fn = tools[i].contains("function") ? tools[i]["function"] : tools[i];
        const std::string tool_name = fn.value("name", "");
        if (!name.empty() && tool_name != name) continue;
        found = true;
        nlohmann::ordered_json params = fn.contains("parameters") ? fn["parameters"] : nlohmann::ordered_json{{"type", "object"}};
        // Arguments are an object even when the schema says nothing of its type.
        if (params.is_object() && !params.contains("type") && !params.contains("$ref") && !params.contains("anyOf")) params["type"] = "object";
        const std::string prefix = fmt::format("tool{}-", i);
        auto r = json_schema_rules(params, {.strict = true}, prefix);
        if (!r) {
            return ApiError::invalid(fmt::format("tools[{}]", i), fmt::format("tools[{}] ({}): its parameters cannot constrain a call: {}", i, tool_name, r.status().message()));
        }
        rules += r->rules;
        const std::string call = fmt::format("tool{}-call", i);
        rules += call + " ::= \"{\" ws \"\\\"name\\\"\" ws \":\" ws " + gbnf_literal(nlohmann::json(tool_name).dump()) +
                 " ws \",\" ws " + gbnf_literal(nlohmann::json(arguments_key).dump()) + " ws \":\" ws " + r->value_rule + " ws \"}\"\n";
        alternatives += (alternatives.empty() ? "" : " | ") + call;
    }
    if (!found) {
        return ApiError::invalid("tool_choice", fmt::format("tool_choice: expected the name of one of the request's tools, got \"{}\"; add it to tools or name another", name));
    }
    return "root ::= " + think + open + "call" + close + "\ncall ::= " + alternatives + "\n" + rules +
           json_primitive_rules();
}

ApiResult<std::shared_ptr<const Grammar>> compile_output_constraint(const OutputConstraint& c, ChatFormat format,
                                                                    const nlohmann::ordered_json& tools, bool thinking_open) {
    std::string text, param;
    switch (c.kind) {
        case OutputConstraint::Kind::None: return std::shared_ptr<const Grammar>();
        case OutputConstraint::Kind::Grammar:
            text = c.grammar;
            param = "grammar";
            break;
        case OutputConstraint::Kind::JsonObject:
            text = json_object_gbnf();
            param = "response_format";
            break;
        case OutputConstraint::Kind::JsonSchema: {
            param = "response_format";
            auto g = json_schema_to_gbnf(c.schema, {.strict = c.strict});
            if (!g) return ApiError::invalid(param, "response_format.json_schema.schema: " + g.status().message());
            text = std::move(*g);
            break;
        }
        case OutputConstraint::Kind::ToolCall: {
            param = "tool_choice";
            auto g = tool_call_gbnf(format, tools, c.tool_name, thinking_open);
            if (!g) return g.error;
            text = std::move(*g.value);
            break;
        }
    }
    auto grammar = parse_grammar(text);
    if (!grammar) {
        // A grammar we wrote that does not parse is our bug; the client's is the client's.
        return ApiError::invalid(param, fmt::format("{}: {}", param, grammar.status().message()));
    }
    return std::shared_ptr<const Grammar>(std::make_shared<const Grammar>(std::move(*grammar)));
}

}  // namespace strata::server
