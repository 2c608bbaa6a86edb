// Jinja2's built-in filters (filters.py), with `tojson` replaced by transformers' json.dumps
// wrapper. map/select/reject/selectattr/rejectattr/items return one-shot generators, as in
// Jinja2: that is why `tools|map(attribute='function')|tojson` fails in the reference renders.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/json_convert.h"
#include "tokenizer/chat_template/utf8.h"

namespace strata::chat_template {
namespace {

// make_attrgetter: "a.b.0" walks items (environment.getitem), digits becoming indices.
Value get_attribute_path(const Value& item, const std::string& path, const Value* fallback) {
    Value cur = item;
    size_t start = 0;
    while (start <= path.size()) {
        size_t dot = path.find('.', start);
        std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        // At most 18 digits: an index beyond int64 (Python would take it) can match nothing anyway.
        bool digits = !part.empty() && part.size() <= 18 &&
                      std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        cur = get_item(cur, digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    if (fallback && cur.is_undefined()) return *fallback;
    return cur;
}

std::string attribute_arg(const Value& v) {
    if (v.is_int()) return std::to_string(v.as_int());
    return arg_string(v, "attribute");
}

Value filter_tojson(const Value& input, const CallArgs& args) {
    JsonDumpOptions options;
    if (const Value* v = args.get(0, "ensure_ascii")) options.ensure_ascii = v->truthy();
    if (const Value* v = args.get(1, "indent"); v && !v->is_none()) {
        options.indent = static_cast<int>(v->is_string() ? 0 : arg_int(*v, "indent"));
    }
    if (const Value* v = args.get(2, "separators"); v && !v->is_none()) {
        if (!v->is_sequence() || v->items().size() != 2) raise(ErrorType::value_error, "separators must be a pair");
        options.item_separator = arg_string(v->items()[0], "separators");
        options.key_separator = arg_string(v->items()[1], "separators");
    }
    if (const Value* v = args.get(3, "sort_keys")) options.sort_keys = v->truthy();
    return Value(python_json_dumps(input, options));
}

Value filter_length(const Value& input, const CallArgs&) {
    switch (input.kind()) {
        case Kind::undefined: return Value(int64_t{0});
        case Kind::string: return Value(static_cast<int64_t>(utf8_length(input.as_string())));
        case Kind::list:
        case Kind::tuple: return Value(static_cast<int64_t>(input.items().size()));
        case Kind::dict: return Value(static_cast<int64_t>(input.dict_data().entries.size()));
        default:
            raise(ErrorType::type_error, fmt::format("object of type '{}' has no len()", python_type_name(input)));
    }
}

Value filter_string(const Value& input, const CallArgs&) {
    if (input.is_string()) return input;  // keeps Markup
    return Value(python_str(input));
}

Value filter_trim(const Value& input, const CallArgs& args) {
    const Value* chars = args.get(0, "chars");
    std::u32string storage;
    if (chars && !chars->is_none()) storage = utf8_decode(arg_string(*chars, "trim"));
    return Value(python_strip(python_str(input), chars && !chars->is_none() ? &storage : nullptr, true, true));
}

Value filter_items(const Value& input, const CallArgs&) {
    if (input.is_undefined()) return Value::generator({});
    if (!input.is_dict()) raise(ErrorType::type_error, "Can only get item pairs from a mapping.");
    ValueList pairs;
    for (const auto& [k, v] : input.dict_data().entries) pairs.push_back(Value::tuple({k, v}));
    return Value::generator(std::move(pairs));
}

Value filter_join(const Value& input, const CallArgs& args) {
    const Value* sep = args.get(0, "d");
    const Value* attribute = args.get(1, "attribute");
    std::string separator = sep ? python_str(*sep) : "";
    std::string out;
    bool first = true;
    for (const Value& item : iterate(input)) {
        if (!first) out += separator;
        first = false;
        out += python_str(attribute ? get_attribute_path(item, attribute_arg(*attribute), nullptr) : item);
    }
    return Value(std::move(out));
}

Value filter_default(const Value& input, const CallArgs& args) {
    const Value* fallback = args.get(0, "default_value");
    const Value* boolean = args.get(1, "boolean");
    if (input.is_undefined() || (boolean && boolean->truthy() && !input.truthy())) {
        return fallback ? *fallback : Value("");
    }
    return input;
}

Value filter_list(const Value& input, const CallArgs&) { return Value::list(iterate(input)); }

Value filter_lower(const Value& input, const CallArgs&) { return Value(python_lower(python_str(input))); }
Value filter_upper(const Value& input, const CallArgs&) { return Value(python_upper(python_str(input))); }

Value filter_safe(const Value& input, const CallArgs&) { return Value(python_str(input), /*safe=*/true); }

// The test that select/reject and selectattr/rejectattr apply; with no test name, truthiness.
bool run_item_test(const Value& item, const CallArgs& args, size_t name_pos) {
    if (args.positional.size() <= name_pos) return item.truthy();
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(name_pos) + 1, args.positional.end());
    rest.keyword = args.keyword;
    return apply_test(arg_string(args.positional[name_pos], "test name"), item, rest);
}

Value select_or_reject(const Value& input, const CallArgs& args, bool select, bool by_attribute) {
    ValueList kept;
    if (input.truthy()) {
        std::string attribute;
        if (by_attribute) {
            if (args.positional.empty()) raise(ErrorType::runtime_error, "Missing parameter for attribute name");
            attribute = attribute_arg(args.positional[0]);
        }
        for (const Value& item : iterate(input)) {
            Value subject = by_attribute ? get_attribute_path(item, attribute, nullptr) : item;
            if (run_item_test(subject, args, by_attribute ? 1 : 0) == select) kept.push_back(item);
        }
    }
    return Value::generator(std::move(kept));
}

Value filter_select(const Value& input, const CallArgs& args) { return select_or_reject(input, args, true, false); }
Value filter_reject(const Value& input, const CallArgs& args) { return select_or_reject(input, args, false, false); }
Value filter_selectattr(const Value& input, const CallArgs& args) { return select_or_reject(input, args, true, true); }
Value filter_rejectattr(const Value& input, const CallArgs& args) { return select_or_reject(input, args, false, true); }

Value filter_map(const Value& input, const CallArgs& args) {
    ValueList mapped;
    if (!input.truthy()) return Value::generator({});
    const Value* attribute = args.positional.empty() ? args.keyword_only("attribute") : nullptr;
    if (attribute) {
        const Value* fallback = args.keyword_only("default");
        for (const Value& item : iterate(input)) {
            mapped.push_back(get_attribute_path(item, attribute_arg(*attribute), fallback));
        }
        return Value::generator(std::move(mapped));
    }
    if (args.positional.empty()) raise(ErrorType::runtime_error, "map requires a filter argument");
    std::string name = arg_string(args.positional[0], "filter name");
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keyword = args.keyword;
    for (const Value& item : iterate(input)) mapped.push_back(apply_filter(name, item, rest));
    return Value::generator(std::move(mapped));
}

Value filter_sort(const Value& input, const CallArgs& args) {
    const Value* reverse = args.get(0, "reverse");
    const Value* case_sensitive = args.get(1, "case_sensitive");
    const Value* attribute = args.get(2, "attribute");
    bool fold_case = !(case_sensitive && case_sensitive->truthy());
    std::vector<std::pair<Value, Value>> keyed;  // (sort key, item)
    for (const Value& item : iterate(input)) {
        Value key = attribute && !attribute->is_none() ? get_attribute_path(item, attribute_arg(*attribute), nullptr) : item;
        if (fold_case && key.is_string()) key = Value(python_lower(key.as_string()));
        keyed.emplace_back(std::move(key), item);
    }
    bool descending = reverse && reverse->truthy();
    // Python's sorted(reverse=True) keeps equal items in their original order, like a stable sort
    // on the reversed comparison.
    std::stable_sort(keyed.begin(), keyed.end(), [descending](const auto& a, const auto& b) {
        return descending ? python_less(b.first, a.first) : python_less(a.first, b.first);
    });
    ValueList out;
    for (auto& kv : keyed) out.push_back(std::move(kv.second));
    return Value::list(std::move(out));
}

Value filter_first(const Value& input, const CallArgs&) {
    ValueList items = iterate(input);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
}

Value filter_last(const Value& input, const CallArgs&) {
    if (input.is_generator()) raise(ErrorType::type_error, "'generator' object is not reversible");
    ValueList items = iterate(input);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
}

Value filter_reverse(const Value& input, const CallArgs&) {
    if (input.is_string()) {
        std::u32string cps = utf8_decode(input.as_string());
        std::reverse(cps.begin(), cps.end());
        return Value(utf8_encode(cps));
    }
    ValueList items = iterate(input);
    std::reverse(items.begin(), items.end());
    return Value::generator(std::move(items));
}

Value filter_unique(const Value& input, const CallArgs&) {
    ValueList out;
    for (const Value& item : iterate(input)) {
        Value key = item.is_string() ? Value(python_lower(item.as_string())) : item;
        bool seen = std::any_of(out.begin(), out.end(), [&](const Value& o) {
            return python_equal(o.is_string() ? Value(python_lower(o.as_string())) : o, key);
        });
        if (!seen) out.push_back(item);
    }
    return Value::generator(std::move(out));
}

Value filter_replace(const Value& input, const CallArgs& args) {
    CallArgs method_args;
    for (size_t i = 0; i < 3; ++i) {
        if (const Value* v = args.get(i, i == 0 ? "old" : i == 1 ? "new" : "count"); v && !v->is_none()) {
            method_args.positional.push_back(*v);
        }
    }
    const Value method = get_attribute(Value(python_str(input)), "replace");
    return method.callable_data().fn(method_args);
}

Value filter_capitalize(const Value& input, const CallArgs&) {
    Value method = get_attribute(Value(python_str(input)), "capitalize");
    return method.callable_data().fn(CallArgs{});
}

Value filter_title(const Value& input, const CallArgs&) {
    Value method = get_attribute(Value(python_str(input)), "title");
    return method.callable_data().fn(CallArgs{});
}

Value filter_int(const Value& input, const CallArgs& args) {
    const Value* fallback = args.get(0, "default");
    Value def = fallback ? *fallback : Value(int64_t{0});
    if (input.is_int() || input.is_bool()) return Value(input.as_int());
    if (input.is_float()) return Value(static_cast<int64_t>(input.as_double()));
    if (input.is_string()) {
        std::string s = python_strip(input.as_string(), nullptr, true, true);
        char* end = nullptr;
        long long i = std::strtoll(s.c_str(), &end, 10);
        if (!s.empty() && *end == '\0') return Value(static_cast<int64_t>(i));
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && *end == '\0' && std::isfinite(d)) return Value(static_cast<int64_t>(d));
    }
    return def;
}

Value filter_float(const Value& input, const CallArgs& args) {
    const Value* fallback = args.get(0, "default");
    if (input.is_number()) return Value(input.as_double());
    if (input.is_string()) {
        std::string s = python_strip(input.as_string(), nullptr, true, true);
        char* end = nullptr;
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && *end == '\0') return Value(d);
    }
    return fallback ? *fallback : Value(0.0);
}

Value filter_abs(const Value& input, const CallArgs&) {
    if (input.is_float()) return Value(std::fabs(input.as_double()));
    if (input.is_int() || input.is_bool()) return Value(std::abs(input.as_int()));
    raise(ErrorType::type_error, fmt::format("bad operand type for abs(): '{}'", python_type_name(input)));
}

Value filter_escape(const Value& input, const CallArgs&) {
    if (input.is_safe()) return input;
    std::string out;
    for (char c : python_str(input)) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out.push_back(c);
        }
    }
    return Value(std::move(out), /*safe=*/true);
}

// do_indent: indents every line but the first (and blank lines only when asked). Jinja appends a
// newline before splitting, so a trailing newline survives unindented.
Value filter_indent(const Value& input, const CallArgs& args) {
    const Value* width = args.get(0, "width");
    const Value* first = args.get(1, "first");
    const Value* blank = args.get(2, "blank");
    std::string indention = width && width->is_string() ? width->as_string()
                                                        : std::string(static_cast<size_t>(width ? arg_int(*width, "indent") : 4), ' ');
    Value lines_value = get_attribute(Value(python_str(input) + "\n"), "splitlines").callable_data().fn(CallArgs{});
    const ValueList& lines = lines_value.items();
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i].as_string();
        if (i > 0) out += "\n";
        if (i > 0 && (!line.empty() || (blank && blank->truthy()))) out += indention;
        out += line;
    }
    if (first && first->truthy()) out = indention + out;
    return Value(std::move(out));
}

struct FilterEntry {
    std::string_view name;
    FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", filter_abs},           {"capitalize", filter_capitalize}, {"count", filter_length},
    {"d", filter_default},         {"default", filter_default},       {"e", filter_escape},
    {"escape", filter_escape},     {"first", filter_first},           {"float", filter_float},
    {"indent", filter_indent},     {"int", filter_int},           {"items", filter_items},           {"join", filter_join},
    {"last", filter_last},         {"length", filter_length},         {"list", filter_list},
    {"lower", filter_lower},       {"map", filter_map},               {"reject", filter_reject},
    {"rejectattr", filter_rejectattr}, {"replace", filter_replace},   {"reverse", filter_reverse},
    {"safe", filter_safe},         {"select", filter_select},         {"selectattr", filter_selectattr},
    {"sort", filter_sort},         {"string", filter_string},         {"title", filter_title},
    {"tojson", filter_tojson},     {"trim", filter_trim},             {"unique", filter_unique},
    {"upper", filter_upper},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
    for (const auto& entry : kFilters) {
        if (entry.name == name) return entry.fn;
    }
    return nullptr;
}

Value apply_filter(std::string_view name, const Value& input, const CallArgs& args) {
    FilterFn fn = find_filter(name);
    if (!fn) raise(ErrorType::runtime_error, fmt::format("No filter named '{}' found.", name));
    return fn(input, args);
}

}  // namespace strata::chat_template
