#pragma once
// The syntax tree the parser builds and the evaluator walks. One node struct per family (Expr,
// Stmt) with a kind tag keeps the tree easy to dump and to switch over; the fields a kind uses are
// listed next to it.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/chat_template/value.h"

namespace strata::chat_template {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind {
    literal,    // literal
    name,       // name
    list,       // args: items
    tuple,      // args: items
    dict,       // args: key0, value0, key1, value1, ...
    attribute,  // target.name
    subscript,  // target[args[0]]
    slice,      // target[args[0]:args[1]:args[2]]; absent bounds are null
    call,       // target(args..., kwargs...)
    filter,     // target|name(args..., kwargs...); target is null inside {% filter %}
    test,       // target is [not] name(args...); `negated` for "is not"
    unary,      // name ("-", "+", "not") applied to target
    binary,     // target <name> args[0]; name is + - * / // % ** ~ and or
    compare,    // target ops[0] args[0] ops[1] args[1] ...; ops are == != < <= > >= in notin
    condition,  // args[0] if target else args[1] (args[1] may be null: Undefined)
};

struct Expr {
    ExprKind kind;
    int line = 0;
    Value literal;
    std::string name;
    ExprPtr target;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::string> ops;
    bool negated = false;
    // Filters and tests unknown when parsed inside {% if %} or `a if b else c`: Jinja defers the
    // error to the moment they run (see parser.cpp).
    bool unknown_builtin = false;
};

enum class StmtKind {
    text,          // text
    output,        // {{ expr }}
    if_,           // branches (condition, body); else_body
    for_,          // targets in expr [if filter]; body; else_body
    set,           // targets (or namespace_target.attribute) = expr
    set_block,     // {% set targets[0] %}body{% endset %}; filters applied to the body text
    macro,         // macro name(params = defaults) body
    filter_block,  // {% filter filters %}body{% endfilter %}
    break_,
    continue_,
};

struct Stmt {
    StmtKind kind;
    int line = 0;
    std::string text;
    ExprPtr expr;
    ExprPtr loop_filter;
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body;
    Body else_body;
    std::vector<std::string> targets;
    std::string namespace_attribute;  // set ns.attr: targets[0] is "ns"
    std::string name;
    std::vector<std::string> params;
    std::vector<ExprPtr> defaults;  // parallel to params; null where no default
    std::vector<ExprPtr> filters;   // filter chain for filter_block / set_block
};

struct Program {
    Body body;
};

}  // namespace strata::chat_template
