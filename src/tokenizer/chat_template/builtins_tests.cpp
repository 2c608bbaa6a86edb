// Jinja2's built-in tests (tests.py): `x is defined`, `x is mapping`, `x is equalto y`, ...
// The type tests follow Python's isinstance rules, e.g. bool counts as a number and
// Undefined is iterable and a sequence (it has __iter__, __len__ and __getitem__).

#include <fmt/format.h>

#include <string_view>

#include "tokenizer/chat_template/builtins.h"

namespace strata::chat_template {
namespace {

const Value& other(const CallArgs& args, const char* test) {
    const Value* v = args.get(0, "other");
    if (!v) raise(ErrorType::type_error, fmt::format("{}() missing required argument 'other'", test));
    return *v;
}

bool test_defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool test_undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
bool test_none(const Value& v, const CallArgs&) { return v.is_none(); }
bool test_string(const Value& v, const CallArgs&) { return v.is_string(); }
bool test_mapping(const Value& v, const CallArgs&) { return v.is_dict(); }
bool test_number(const Value& v, const CallArgs&) { return v.is_number(); }
bool test_integer(const Value& v, const CallArgs&) { return v.is_int(); }
bool test_float(const Value& v, const CallArgs&) { return v.is_float(); }
bool test_boolean(const Value& v, const CallArgs&) { return v.is_bool(); }
bool test_true(const Value& v, const CallArgs&) { return v.is_bool() && v.as_bool(); }
bool test_false(const Value& v, const CallArgs&) { return v.is_bool() && !v.as_bool(); }
bool test_callable(const Value& v, const CallArgs&) { return v.is_callable(); }
bool test_safe(const Value& v, const CallArgs&) { return v.is_safe(); }

bool test_iterable(const Value& v, const CallArgs&) {
    switch (v.kind()) {
        case Kind::undefined:
        case Kind::string:
        case Kind::list:
        case Kind::tuple:
        case Kind::dict:
        case Kind::generator: return true;
        default: return false;
    }
}

bool test_sequence(const Value& v, const CallArgs&) {
    return v.is_undefined() || v.is_string() || v.is_sequence() || v.is_dict();
}

bool test_equalto(const Value& v, const CallArgs& args) { return python_equal(v, other(args, "eq")); }
bool test_ne(const Value& v, const CallArgs& args) { return !python_equal(v, other(args, "ne")); }
bool test_lt(const Value& v, const CallArgs& args) { return python_less(v, other(args, "lt"), "<"); }
bool test_le(const Value& v, const CallArgs& args) { return !python_less(other(args, "le"), v, "<="); }
bool test_gt(const Value& v, const CallArgs& args) { return python_less(other(args, "gt"), v, ">"); }
bool test_ge(const Value& v, const CallArgs& args) { return !python_less(v, other(args, "ge"), ">="); }

bool test_sameas(const Value& v, const CallArgs& args) {
    // Identity: exact for None/bools and shared containers; equal scalars stand in otherwise.
    const Value& o = other(args, "sameas");
    return v.kind() == o.kind() && python_equal(v, o);
}

bool test_in(const Value& v, const CallArgs& args) {
    const Value* seq = args.get(0, "seq");
    if (!seq) raise(ErrorType::type_error, "in() missing required argument 'seq'");
    if (seq->is_string()) return v.is_string() && seq->as_string().find(v.as_string()) != std::string::npos;
    if (seq->is_dict()) return seq->dict_find(v) != nullptr;
    for (const Value& item : iterate(*seq)) {
        if (python_equal(item, v)) return true;
    }
    return false;
}

bool test_odd(const Value& v, const CallArgs&) { return arg_int(v, "odd") % 2 != 0; }
bool test_even(const Value& v, const CallArgs&) { return arg_int(v, "even") % 2 == 0; }

bool test_divisibleby(const Value& v, const CallArgs& args) {
    int64_t d = arg_int(other(args, "divisibleby"), "divisibleby");
    if (d == 0) raise(ErrorType::zero_division_error, "integer division or modulo by zero");
    return arg_int(v, "divisibleby") % d == 0;
}

bool test_lower(const Value& v, const CallArgs&) {
    return v.is_string() && python_lower(v.as_string()) == v.as_string();
}
bool test_upper(const Value& v, const CallArgs&) {
    return v.is_string() && python_upper(v.as_string()) == v.as_string();
}

bool test_filter(const Value& v, const CallArgs&) { return v.is_string() && find_filter(v.as_string()) != nullptr; }
bool test_test(const Value& v, const CallArgs&) { return v.is_string() && find_test(v.as_string()) != nullptr; }

struct TestEntry {
    std::string_view name;
    TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"!=", test_ne},         {"<", test_lt},           {"<=", test_le},         {"==", test_equalto},
    {">", test_gt},          {">=", test_ge},          {"boolean", test_boolean}, {"callable", test_callable},
    {"defined", test_defined}, {"divisibleby", test_divisibleby}, {"eq", test_equalto}, {"equalto", test_equalto},
    {"escaped", test_safe},  {"even", test_even},      {"false", test_false},   {"filter", test_filter},
    {"float", test_float},   {"ge", test_ge},          {"greaterthan", test_gt}, {"gt", test_gt},
    {"in", test_in},         {"integer", test_integer}, {"iterable", test_iterable}, {"le", test_le},
    {"lessthan", test_lt},   {"lower", test_lower},    {"lt", test_lt},         {"mapping", test_mapping},
    {"ne", test_ne},         {"none", test_none},      {"number", test_number}, {"odd", test_odd},
    {"sameas", test_sameas}, {"sequence", test_sequence}, {"string", test_string}, {"test", test_test},
    {"true", test_true},     {"undefined", test_undefined}, {"upper", test_upper},
};

}  // namespace

TestFn find_test(std::string_view name) {
    for (const auto& entry : kTests) {
        if (entry.name == name) return entry.fn;
    }
    return nullptr;
}

bool apply_test(std::string_view name, const Value& input, const CallArgs& args) {
    TestFn fn = find_test(name);
    if (!fn) raise(ErrorType::runtime_error, fmt::format("No test named '{}' found.", name));
    return fn(input, args);
}

}  // namespace strata::chat_template
