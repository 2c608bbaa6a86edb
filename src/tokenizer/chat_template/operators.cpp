#include "tokenizer/chat_template/operators.h"

#include <fmt/format.h>

#include <cmath>

#include "tokenizer/chat_template/builtins.h"

namespace strata::chat_template {
namespace {

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
    raise(ErrorType::type_error, fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op,
                                             python_type_name(a), python_type_name(b)));
}

// markupsafe.escape, for `str + Markup`: Python calls Markup.__radd__, which escapes the str.
std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out.push_back(c);
        }
    }
    return out;
}

Value add(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return Value(a.as_double() + b.as_double());
        return Value(a.as_int() + b.as_int());
    }
    if (a.is_string() && b.is_string()) {
        if (!a.is_safe() && !b.is_safe()) return Value(a.as_string() + b.as_string());
        std::string left = a.is_safe() ? a.as_string() : html_escape(a.as_string());
        std::string right = b.is_safe() ? b.as_string() : html_escape(b.as_string());
        return Value(left + right, /*safe=*/true);
    }
    if (a.is_string() && !a.is_safe()) {
        raise(ErrorType::type_error, fmt::format("can only concatenate str (not \"{}\") to str", python_type_name(b)));
    }
    if (a.is_sequence()) {
        if (b.kind() != a.kind()) {
            raise(ErrorType::type_error, fmt::format("can only concatenate {} (not \"{}\") to {}", python_type_name(a),
                                                     python_type_name(b), python_type_name(a)));
        }
        ValueList items = a.items();
        items.insert(items.end(), b.items().begin(), b.items().end());
        return a.is_list() ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    unsupported("+", a, b);
}

// Chat templates never build large repeated values; a bound turns a runaway `"x" * 10**12` in a
// hostile or broken template into an error instead of exhausting memory or time.
constexpr uint64_t kMaxRepeatedItems = uint64_t(16) << 20;

Value repeat(const Value& seq, int64_t times) {
    const uint64_t size = seq.is_string() ? seq.as_string().size() : seq.items().size();
    if (times <= 0 || size == 0) times = 0;
    if (times > 0 && static_cast<uint64_t>(times) > kMaxRepeatedItems / size) {
        raise(ErrorType::runtime_error, fmt::format("repetition too large: {} items times {} (the limit is {} items)",
                                                    size, times, kMaxRepeatedItems));
    }
    if (seq.is_string()) {
        std::string out;
        for (int64_t i = 0; i < times; ++i) out += seq.as_string();
        return Value(std::move(out));
    }
    ValueList items;
    for (int64_t i = 0; i < times; ++i) items.insert(items.end(), seq.items().begin(), seq.items().end());
    return seq.is_list() ? Value::list(std::move(items)) : Value::tuple(std::move(items));
}

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// printf-style `str % args` for the conversions templates use: %s %r %d %i %f %%.
Value percent_format(const std::string& format, const Value& args) {
    ValueList values = args.is_tuple() ? args.items() : ValueList{args};
    size_t next = 0;
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
            out.push_back(format[i]);
            continue;
        }
        if (++i >= format.size()) raise(ErrorType::value_error, "incomplete format");
        char conv = format[i];
        if (conv == '%') {
            out.push_back('%');
            continue;
        }
        if (next >= values.size()) raise(ErrorType::type_error, "not enough arguments for format string");
        const Value& v = values[next++];
        switch (conv) {
            case 's': out += python_str(v); break;
            case 'r': out += python_repr(v); break;
            case 'd':
            case 'i':
                if (!v.is_number()) {
                    raise(ErrorType::type_error,
                          fmt::format("%{} format: a real number is required, not {}", conv, python_type_name(v)));
                }
                out += std::to_string(v.is_float() ? static_cast<int64_t>(v.as_double()) : v.as_int());
                break;
            case 'f': out += fmt::format("{:.6f}", v.as_double()); break;
            default: raise(ErrorType::value_error, fmt::format("unsupported format character '{}'", conv));
        }
    }
    if (next < values.size()) raise(ErrorType::type_error, "not all arguments converted during string formatting");
    return Value(std::move(out));
}

Value arithmetic(std::string_view op, const Value& a, const Value& b) {
    if (op == "*") {
        if ((a.is_string() || a.is_sequence()) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
        if ((b.is_string() || b.is_sequence()) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
    }
    if (op == "%" && a.is_string()) return percent_format(a.as_string(), b);
    if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
    bool floating = a.is_float() || b.is_float();
    double x = a.as_double(), y = b.as_double();
    if (op == "-") return floating ? Value(x - y) : Value(a.as_int() - b.as_int());
    if (op == "*") return floating ? Value(x * y) : Value(a.as_int() * b.as_int());
    if (op == "/") {
        if (y == 0) raise(ErrorType::zero_division_error, floating ? "float division by zero" : "division by zero");
        return Value(x / y);
    }
    if (op == "//" || op == "%") {
        if (y == 0) {
            raise(ErrorType::zero_division_error,
                  floating ? (op == "//" ? "float floor division by zero" : "float modulo")
                           : "integer division or modulo by zero");
        }
        if (!floating) {
            int64_t q = floor_div(a.as_int(), b.as_int());
            return op == "//" ? Value(q) : Value(a.as_int() - q * b.as_int());
        }
        double q = std::floor(x / y);
        return op == "//" ? Value(q) : Value(x - q * y);
    }
    if (op == "**") {
        if (!floating && b.as_int() >= 0) {
            int64_t r = 1;
            for (int64_t i = 0; i < b.as_int(); ++i) r *= a.as_int();
            return Value(r);
        }
        return Value(std::pow(x, y));
    }
    unsupported(op, a, b);
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
        case Kind::undefined: return false;  // Undefined iterates as empty
        case Kind::string:
            if (!item.is_string()) {
                raise(ErrorType::type_error, fmt::format("'in <string>' requires string as left operand, not {}",
                                                         python_type_name(item)));
            }
            return container.as_string().find(item.as_string()) != std::string::npos;
        case Kind::dict: return container.dict_find(item) != nullptr;
        case Kind::list:
        case Kind::tuple:
        case Kind::generator:
            for (const Value& v : iterate(container)) {
                if (python_equal(v, item)) return true;
            }
            return false;
        default:
            raise(ErrorType::type_error,
                  fmt::format("argument of type '{}' is not iterable", python_type_name(container)));
    }
}

}  // namespace

Value binary_op(std::string_view op, const Value& a, const Value& b) {
    if (a.is_undefined()) a.fail_undefined();
    if (b.is_undefined()) b.fail_undefined();
    if (op == "+") return add(a, b);
    return arithmetic(op, a, b);
}

Value unary_op(std::string_view op, const Value& a) {
    if (a.is_undefined()) a.fail_undefined();
    if (!a.is_number()) {
        raise(ErrorType::type_error, fmt::format("bad operand type for unary {}: '{}'", op, python_type_name(a)));
    }
    if (op == "+") return a.is_float() ? a : Value(a.as_int());
    return a.is_float() ? Value(-a.as_double()) : Value(-a.as_int());
}

bool compare_op(std::string_view op, const Value& a, const Value& b) {
    if (op == "==") return python_equal(a, b);
    if (op == "!=") return !python_equal(a, b);
    if (op != "in" && op != "notin") {
        // Check orderability here so the message names the operands in source order.
        if (a.is_undefined()) a.fail_undefined();
        if (b.is_undefined()) b.fail_undefined();
        bool orderable = (a.is_number() && b.is_number()) || (a.is_string() && b.is_string()) ||
                         (a.is_sequence() && a.kind() == b.kind());
        if (!orderable) {
            raise(ErrorType::type_error, fmt::format("'{}' not supported between instances of '{}' and '{}'", op,
                                                     python_type_name(a), python_type_name(b)));
        }
    }
    if (op == "<") return python_less(a, b, "<");
    if (op == ">") return python_less(b, a, ">");
    if (op == "<=") return python_less(a, b, "<=") || python_equal(a, b);
    if (op == ">=") return python_less(b, a, ">=") || python_equal(a, b);
    if (op == "in") return contains(b, a);
    return !contains(b, a);  // notin
}

}  // namespace strata::chat_template
