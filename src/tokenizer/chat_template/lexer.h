#pragma once
// Splits template source into tokens the way Jinja2's lexer does with transformers' settings
// (trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False). All whitespace control is
// resolved here, so text tokens already hold the exact bytes to output.
//
//   auto tokens = lex("{%- if x %}\n  hi\n{% endif %}");
//   // block_begin, name "if", name "x", block_end, text "  hi\n", block_begin, name "endif", ...

#include <string>
#include <string_view>
#include <vector>

namespace strata::chat_template {

enum class TokenType {
    text,            // literal template data
    variable_begin,  // {{
    variable_end,    // }}
    block_begin,     // {%
    block_end,       // %}
    name,            // identifiers and keywords (if, for, in, not, true, ...)
    string,          // a string literal, escapes already decoded
    integer,
    floating,
    op,              // punctuation and operators: + - * / // % ** ~ ( ) [ ] { } , . : | = == != < <= > >=
    eof,
};

struct Token {
    TokenType type;
    std::string value;
    int line;  // 1-based line where the token starts
};

// Throws TemplateFailure (syntax_error) on an unterminated tag, comment or string.
std::vector<Token> lex(std::string_view source);

}  // namespace strata::chat_template
