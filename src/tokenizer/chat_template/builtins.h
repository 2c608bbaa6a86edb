#pragma once
// Jinja2's built-in filters and tests, the Python methods templates call on str/dict/list, and
// the sandboxed attribute and item lookup. Each lives in one table (builtins_filters.cpp,
// builtins_tests.cpp, string_methods.cpp); the evaluator and the parser only look names up here.
//
//   FilterFn trim = find_filter("trim");
//   Value out = trim(Value("  hi "), CallArgs{});          // "hi"
//   get_attribute(Value("a,b"), "split");                  // a bound method (callable)

#include <optional>
#include <string>
#include <string_view>

#include "tokenizer/chat_template/value.h"

namespace strata::chat_template {

using FilterFn = Value (*)(const Value& input, const CallArgs& args);
using TestFn = bool (*)(const Value& input, const CallArgs& args);

// Null when Jinja2 has no such filter / test.
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);

// Applies a filter or test by name; raises TemplateRuntimeError for an unknown name, as Jinja
// does when an unknown filter inside {% if %} finally runs.
Value apply_filter(std::string_view name, const Value& input, const CallArgs& args);
bool apply_test(std::string_view name, const Value& input, const CallArgs& args);

// `obj.name` in the ImmutableSandboxedEnvironment: the Python attribute first (a bound method
// of str/dict/list), then the item obj["name"], else Undefined. Mutating methods come back as
// an Undefined that raises SecurityError when called.
Value get_attribute(const Value& obj, const std::string& name);
// `obj[key]`: the item, then the attribute for string keys, else Undefined. Raises only when
// obj itself is Undefined.
Value get_item(const Value& obj, const Value& key);
// obj[start:stop:step] on a list, tuple or string, with Python's clamping rules.
Value get_slice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                std::optional<int64_t> step);

// Python str.split(sep, maxsplit) with sep null meaning "runs of whitespace".
ValueList python_split(const std::string& s, const std::string* sep, int64_t maxsplit);
// Python str.lower()/upper() (ASCII letters and the Latin-1, Greek and Cyrillic basic blocks).
std::string python_lower(std::string_view s);
std::string python_upper(std::string_view s);

// Helpers shared by the builtin tables: argument conversion with Python's TypeError wording.
int64_t arg_int(const Value& v, const char* what);
std::string arg_string(const Value& v, const char* what);

}  // namespace strata::chat_template
