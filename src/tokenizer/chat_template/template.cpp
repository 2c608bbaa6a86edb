#include "tokenizer/chat_template/template.h"

#include <fmt/format.h>

#include "tokenizer/chat_template/ast.h"
#include "tokenizer/chat_template/evaluator.h"
#include "tokenizer/chat_template/json_convert.h"
#include "tokenizer/chat_template/lexer.h"
#include "tokenizer/chat_template/parser.h"

namespace strata::chat_template {

namespace {
TemplateError to_error(const TemplateFailure& failure) {
    return TemplateError{error_type_name(failure.type), failure.message, failure.line};
}
}  // namespace

std::string TemplateError::describe() const {
    if (line > 0) return fmt::format("chat template line {}: {}", line, message);
    return fmt::format("chat template: {}", message);
}

std::variant<ChatTemplate, TemplateError> ChatTemplate::parse_detailed(std::string source) {
    try {
        ChatTemplate tmpl;
        tmpl.program_ = parse_program(lex(source));
        tmpl.source_ = std::move(source);
        return tmpl;
    } catch (const TemplateFailure& failure) {
        return to_error(failure);
    }
}

Result<ChatTemplate> ChatTemplate::parse(std::string source) {
    auto parsed = parse_detailed(std::move(source));
    if (auto* error = std::get_if<TemplateError>(&parsed)) return Status::error_message(error->describe());
    return std::move(std::get<ChatTemplate>(parsed));
}

std::variant<std::string, TemplateError> ChatTemplate::render_detailed(const nlohmann::ordered_json& variables,
                                                                       const RenderOptions& options) const {
    if (!variables.is_object()) {
        return TemplateError{"TypeError",
                             fmt::format("render variables: expected a JSON object, got {}", variables.type_name()), 0};
    }
    try {
        return render_program(*program_, value_from_json(variables), RenderClock{options.now});
    } catch (const TemplateFailure& failure) {
        return to_error(failure);
    }
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& variables, const RenderOptions& options) const {
    auto result = render_detailed(variables, options);
    if (auto* error = std::get_if<TemplateError>(&result)) return Status::error_message(error->describe());
    return std::move(std::get<std::string>(result));
}

}  // namespace strata::chat_template
