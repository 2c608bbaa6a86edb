#pragma once
// Walks a parsed Program and writes its output, with Jinja2's scoping: {% for %} bodies and
// macro calls get their own scope (a `set` there does not leak out; namespace() is the way out),
// while {% if %} shares its enclosing scope.
//
//   std::string text = render_program(*program, variables_dict, RenderClock{"2026-01-15T00:00:00"});
//   // throws TemplateFailure (value.h) with the Python-style message and the template line

#include <optional>
#include <string>

#include "tokenizer/chat_template/ast.h"
#include "tokenizer/chat_template/value.h"

namespace strata::chat_template {

struct RenderClock {
    // ISO "YYYY-MM-DDTHH:MM:SS" for strftime_now(); the local time when absent.
    std::optional<std::string> now;
};

// `variables` is a dict Value whose entries become template variables, next to the globals
// range, namespace, dict, raise_exception and strftime_now.
std::string render_program(const Program& program, const Value& variables, const RenderClock& clock);

}  // namespace strata::chat_template
