#pragma once
// Python's operators on template values, with CPython's TypeError wording, because the expected
// error renders quote it ("can only concatenate str (not \"list\") to str").
//
//   binary_op("+", Value("a"), Value("b"));          // "ab"
//   binary_op("//", Value(-7), Value(2));            // -4 (floor division)
//   compare_op("in", Value("x"), Value("xyz"));      // true

#include <string_view>

#include "tokenizer/chat_template/value.h"

namespace strata::chat_template {

// op is one of + - * / // % **. Any Undefined operand raises its UndefinedError.
Value binary_op(std::string_view op, const Value& a, const Value& b);
// op is one of - + (unary).
Value unary_op(std::string_view op, const Value& a);
// op is one of == != < <= > >= in notin.
bool compare_op(std::string_view op, const Value& a, const Value& b);

}  // namespace strata::chat_template
