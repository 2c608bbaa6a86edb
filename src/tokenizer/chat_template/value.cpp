#include "tokenizer/chat_template/value.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "tokenizer/chat_template/utf8.h"

namespace strata::chat_template {

const char* error_type_name(ErrorType type) {
    switch (type) {
        case ErrorType::template_error: return "TemplateError";
        case ErrorType::undefined_error: return "UndefinedError";
        case ErrorType::security_error: return "SecurityError";
        case ErrorType::type_error: return "TypeError";
        case ErrorType::value_error: return "ValueError";
        case ErrorType::zero_division_error: return "ZeroDivisionError";
        case ErrorType::runtime_error: return "TemplateRuntimeError";
        case ErrorType::syntax_error: return "TemplateSyntaxError";
        case ErrorType::assertion_error: return "TemplateAssertionError";
    }
    return "Error";
}

void raise(ErrorType type, std::string message) { throw TemplateFailure{type, std::move(message), 0}; }

const Value* CallArgs::get(size_t position, std::string_view name) const {
    if (position < positional.size()) return &positional[position];
    for (const auto& [key, value] : keyword) {
        if (key == name) return &value;
    }
    return nullptr;
}

const Value* CallArgs::keyword_only(std::string_view name) const {
    for (const auto& [key, value] : keyword) {
        if (key == name) return &value;
    }
    return nullptr;
}

Value Value::undefined(std::string message, ErrorType error) {
    Value v;
    v.kind_ = Kind::undefined;
    v.undef_ = std::make_shared<const UndefinedData>(UndefinedData{std::move(message), error});
    return v;
}

Value Value::list(ValueList items) {
    Value v;
    v.kind_ = Kind::list;
    v.list_ = std::make_shared<ListData>(ListData{std::move(items)});
    return v;
}

Value Value::tuple(ValueList items) {
    Value v = list(std::move(items));
    v.kind_ = Kind::tuple;
    return v;
}

Value Value::dict() {
    Value v;
    v.kind_ = Kind::dict;
    v.dict_ = std::make_shared<DictData>();
    return v;
}

Value Value::generator(ValueList items) {
    Value v;
    v.kind_ = Kind::generator;
    v.gen_ = std::make_shared<GeneratorData>(GeneratorData{std::move(items), 0});
    return v;
}

Value Value::make_namespace() {
    Value v = dict();
    v.kind_ = Kind::namespace_;
    return v;
}

Value Value::callable(std::string name, NativeFunction fn) {
    Value v;
    v.kind_ = Kind::callable;
    v.fn_ = std::make_shared<const CallableData>(CallableData{std::move(name), std::move(fn)});
    return v;
}

const Value* Value::dict_find(const Value& key) const {
    for (const auto& [k, v] : dict_->entries) {
        if (python_equal(k, key)) return &v;
    }
    return nullptr;
}

const Value* Value::dict_find(std::string_view key) const {
    for (const auto& [k, v] : dict_->entries) {
        if (k.is_string() && k.as_string() == key) return &v;
    }
    return nullptr;
}

void Value::dict_set(Value key, Value value) const {
    for (auto& [k, v] : dict_->entries) {
        if (python_equal(k, key)) {
            v = std::move(value);
            return;
        }
    }
    dict_->entries.emplace_back(std::move(key), std::move(value));
}

bool Value::truthy() const {
    switch (kind_) {
        case Kind::undefined:
        case Kind::none: return false;
        case Kind::boolean:
        case Kind::integer: return int_ != 0;
        case Kind::floating: return float_ != 0.0;
        case Kind::string: return !str_->empty();
        case Kind::list:
        case Kind::tuple: return !list_->items.empty();
        case Kind::dict: return !dict_->entries.empty();
        default: return true;  // generators, namespaces and callables are always true in Python
    }
}

void Value::fail_undefined() const { raise(undef_->error, undef_->message); }

std::string python_type_name(const Value& v) {
    switch (v.kind()) {
        case Kind::undefined: return "Undefined";
        case Kind::none: return "NoneType";
        case Kind::boolean: return "bool";
        case Kind::integer: return "int";
        case Kind::floating: return "float";
        case Kind::string: return v.is_safe() ? "Markup" : "str";
        case Kind::list: return "list";
        case Kind::tuple: return "tuple";
        case Kind::dict: return "dict";
        case Kind::generator: return "generator";
        case Kind::namespace_: return "Namespace";
        case Kind::callable: return "function";
    }
    return "object";
}

std::string object_type_repr(const Value& v) {
    if (v.is_none()) return "None";
    if (v.is_namespace()) return "jinja2.utils.Namespace object";
    if (v.is_safe()) return "markupsafe.Markup object";
    return python_type_name(v) + " object";
}

std::string python_float_repr(double f) {
    if (std::isnan(f)) return "nan";
    if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
    // Shortest round-trip digits, then Python's layout rule: positional notation when the
    // decimal exponent is in [-4, 16), scientific otherwise, with at least two exponent digits.
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    size_t e_pos = sci.find('e');
    std::string mantissa = sci.substr(0, e_pos);
    int exponent = std::stoi(sci.substr(e_pos + 1));
    bool negative = mantissa[0] == '-';
    if (negative) mantissa.erase(0, 1);
    std::string digits;
    for (char c : mantissa) {
        if (c != '.') digits.push_back(c);
    }
    std::string out = negative ? "-" : "";
    int decpt = exponent + 1;  // position of the decimal point relative to the digits
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
        } else if (static_cast<size_t>(decpt) >= digits.size()) {
            out += digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out;
}

// Python's repr of a str: single quotes unless the text holds ' and no ", escapes for the
// quote, backslash, \n \r \t, and \xNN / \uNNNN for the other non-printable code points.
static std::string string_repr(const std::string& s) {
    bool has_single = s.find('\'') != std::string::npos;
    bool has_double = s.find('"') != std::string::npos;
    char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    for (char32_t cp : utf8_decode(s)) {
        if (cp == static_cast<char32_t>(quote) || cp == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(cp));
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (!is_python_printable(cp)) {
            if (cp < 0x100) out += fmt::format("\\x{:02x}", static_cast<uint32_t>(cp));
            else if (cp < 0x10000) out += fmt::format("\\u{:04x}", static_cast<uint32_t>(cp));
            else out += fmt::format("\\U{:08x}", static_cast<uint32_t>(cp));
        } else {
            utf8_append(out, cp);
        }
    }
    out.push_back(quote);
    return out;
}

static std::string join_repr(const ValueList& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += python_repr(items[i]);
    }
    return out;
}

std::string python_repr(const Value& v) {
    switch (v.kind()) {
        case Kind::undefined: return "Undefined";
        case Kind::none: return "None";
        case Kind::boolean: return v.as_bool() ? "True" : "False";
        case Kind::integer: return std::to_string(v.as_int());
        case Kind::floating: return python_float_repr(v.as_double());
        case Kind::string: return v.is_safe() ? "Markup(" + string_repr(v.as_string()) + ")" : string_repr(v.as_string());
        case Kind::list: return "[" + join_repr(v.items()) + "]";
        case Kind::tuple:
            return v.items().size() == 1 ? "(" + python_repr(v.items()[0]) + ",)" : "(" + join_repr(v.items()) + ")";
        case Kind::dict:
        case Kind::namespace_: {
            std::string out = "{";
            bool first = true;
            for (const auto& [k, val] : v.dict_data().entries) {
                if (!first) out += ", ";
                first = false;
                out += python_repr(k) + ": " + python_repr(val);
            }
            out += "}";
            return v.is_namespace() ? "<Namespace " + out + ">" : out;
        }
        // The address Python prints is not reproducible; a fixed one keeps renders deterministic.
        case Kind::generator: return "<generator object at 0x0>";
        case Kind::callable: return "<function " + v.callable_data().name + ">";
    }
    return "";
}

std::string python_str(const Value& v) {
    if (v.is_undefined()) return "";
    if (v.is_string()) return v.as_string();
    return python_repr(v);
}

bool python_equal(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) {
        // A list never equals a tuple in Python; every other cross-kind pair is unequal too.
        return false;
    }
    switch (a.kind()) {
        case Kind::undefined:
        case Kind::none: return true;
        case Kind::string: return a.as_string() == b.as_string();
        case Kind::list:
        case Kind::tuple: {
            const auto& x = a.items();
            const auto& y = b.items();
            if (x.size() != y.size()) return false;
            for (size_t i = 0; i < x.size(); ++i) {
                if (!python_equal(x[i], y[i])) return false;
            }
            return true;
        }
        case Kind::dict: {
            // Dict equality ignores order: same keys, equal values.
            const auto& x = a.dict_data().entries;
            if (x.size() != b.dict_data().entries.size()) return false;
            for (const auto& [k, val] : x) {
                const Value* other = b.dict_find(k);
                if (!other || !python_equal(val, *other)) return false;
            }
            return true;
        }
        case Kind::namespace_: return &a.dict_data() == &b.dict_data();
        case Kind::generator: return &a.generator_data() == &b.generator_data();
        case Kind::callable: return &a.callable_data() == &b.callable_data();
        default: return false;
    }
}

bool python_less(const Value& a, const Value& b, const char* op) {
    if (a.is_undefined()) a.fail_undefined();
    if (b.is_undefined()) b.fail_undefined();
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
        return a.as_int() < b.as_int();
    }
    if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order == code point order
    if (a.is_sequence() && a.kind() == b.kind()) {
        const auto& x = a.items();
        const auto& y = b.items();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (!python_equal(x[i], y[i])) return python_less(x[i], y[i], op);
        }
        return x.size() < y.size();
    }
    raise(ErrorType::type_error, fmt::format("'{}' not supported between instances of '{}' and '{}'", op,
                                             python_type_name(a), python_type_name(b)));
}

ValueList iterate(const Value& v) {
    switch (v.kind()) {
        case Kind::undefined: return {};
        case Kind::list:
        case Kind::tuple: return v.items();
        case Kind::dict: {
            ValueList keys;
            for (const auto& entry : v.dict_data().entries) keys.push_back(entry.first);
            return keys;
        }
        case Kind::string: {
            ValueList chars;
            for (char32_t cp : utf8_decode(v.as_string())) {
                std::string one;
                utf8_append(one, cp);
                chars.emplace_back(std::move(one));
            }
            return chars;
        }
        case Kind::generator: {
            GeneratorData& g = v.generator_data();
            ValueList rest(g.items.begin() + static_cast<std::ptrdiff_t>(g.next), g.items.end());
            g.next = g.items.size();
            return rest;
        }
        default:
            raise(ErrorType::type_error, fmt::format("'{}' object is not iterable", python_type_name(v)));
    }
}

}  // namespace strata::chat_template
