#pragma once
// Recursive-descent parser over lexer tokens, following Jinja2's grammar and operator precedence
// (parser.py): or < and < not < compare/in < + - < ~ < * / // % < ** < unary - < filters/tests
// < postfix (. [] ()).
//
//   std::unique_ptr<Program> program = parse_program(lex(source));   // throws TemplateFailure

#include <memory>
#include <vector>

#include "tokenizer/chat_template/ast.h"
#include "tokenizer/chat_template/lexer.h"

namespace strata::chat_template {

std::unique_ptr<Program> parse_program(std::vector<Token> tokens);

}  // namespace strata::chat_template
