#pragma once
// Chat templates (the Jinja `chat_template` of tokenizer_config.json / GGUF metadata), rendered
// byte for byte as transformers' apply_chat_template renders them with Python Jinja2:
// trim_blocks, lstrip_blocks, loop controls, the immutable sandbox, lenient Undefined, and the
// raise_exception / strftime_now globals and json.dumps-based tojson filter it installs.
//
//   STRATA_ASSIGN_OR_RETURN(ChatTemplate tmpl, ChatTemplate::parse(source));
//   nlohmann::ordered_json vars = {{"messages", messages}, {"add_generation_prompt", true},
//                                  {"bos_token", "<s>"}};
//   STRATA_ASSIGN_OR_RETURN(std::string prompt, tmpl.render(vars, RenderOptions{}));
//
// A variable absent from `variables` is undefined (not none), exactly as in Jinja.

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "core/status.h"

namespace strata::chat_template {

struct Program;

struct RenderOptions {
    // ISO time "2026-01-15T00:00:00" that strftime_now() formats; the local time when absent.
    std::optional<std::string> now;
};

// A failed parse or render, with the parts kept apart.
struct TemplateError {
    std::string type;     // the Python exception class: "TemplateError" (from raise_exception),
                          // "TypeError", "UndefinedError", "TemplateSyntaxError", ...
    std::string message;  // str(exception), as Python prints it
    int line = 0;         // 1-based template line of the failing tag or expression; 0 if unknown
    bool raised_by_template() const { return type == "TemplateError"; }
    // "chat template line 12: <message>" (or "chat template: ..." when the line is unknown).
    std::string describe() const;
};

class ChatTemplate {
public:
    // Fails on a syntax error, or on an unknown filter/test outside {% if %} (as Jinja does).
    static Result<ChatTemplate> parse(std::string source);
    // The same parse, keeping the error's parts apart.
    static std::variant<ChatTemplate, TemplateError> parse_detailed(std::string source);

    // The rendered text, or an error whose message is TemplateError::describe().
    Result<std::string> render(const nlohmann::ordered_json& variables, const RenderOptions& options) const;
    // The same render, keeping the error's type, Python message and line apart (tests compare
    // the message byte for byte with Python's).
    std::variant<std::string, TemplateError> render_detailed(const nlohmann::ordered_json& variables,
                                                             const RenderOptions& options) const;

    const std::string& source() const { return source_; }

private:
    ChatTemplate() = default;

    std::string source_;
    std::shared_ptr<const Program> program_;  // shared: copies of a template share one tree
};

}  // namespace strata::chat_template
