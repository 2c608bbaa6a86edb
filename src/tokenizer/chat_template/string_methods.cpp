// Python methods callable from templates (str.split, dict.get, ...) and the sandbox's attribute
// and item lookup that finds them. Templates only read: the mutating methods of dict and list
// resolve to an Undefined that raises SecurityError when called, as ImmutableSandboxedEnvironment
// does.

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/utf8.h"

namespace strata::chat_template {

int64_t arg_int(const Value& v, const char* what) {
    if (v.is_int() || v.is_bool()) return v.as_int();
    raise(ErrorType::type_error,
          fmt::format("{}: '{}' object cannot be interpreted as an integer", what, python_type_name(v)));
}

std::string arg_string(const Value& v, const char* what) {
    if (v.is_string()) return v.as_string();
    raise(ErrorType::type_error, fmt::format("{}: must be str, not {}", what, python_type_name(v)));
}

namespace {

char32_t lower_cp(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) || (c >= 0x410 && c <= 0x42F)) {
        return c + 32;
    }
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

char32_t upper_cp(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) || (c >= 0x430 && c <= 0x44F)) {
        return c - 32;
    }
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

std::string map_cps(std::string_view s, char32_t (*fn)(char32_t)) {
    std::u32string cps = utf8_decode(s);
    for (char32_t& c : cps) c = fn(c);
    return utf8_encode(cps);
}

const Value& required(const CallArgs& args, size_t pos, const char* name, const char* method) {
    const Value* v = args.get(pos, name);
    if (!v) raise(ErrorType::type_error, fmt::format("{}() missing required argument '{}'", method, name));
    return *v;
}

// startswith/endswith accept one prefix or a tuple of them.
bool affix_match(const std::string& s, const Value& affix, bool at_end, const char* method) {
    if (affix.is_sequence()) {
        for (const Value& a : affix.items()) {
            if (affix_match(s, a, at_end, method)) return true;
        }
        return false;
    }
    std::string a = arg_string(affix, method);
    if (a.size() > s.size()) return false;
    return at_end ? s.compare(s.size() - a.size(), a.size(), a) == 0 : s.compare(0, a.size(), a) == 0;
}

std::string python_replace(const std::string& s, const std::string& old, const std::string& with, int64_t count) {
    std::string out;
    if (old.empty()) {
        // Python inserts `with` before every code point and at the end.
        std::u32string cps = utf8_decode(s);
        int64_t done = 0;
        for (char32_t cp : cps) {
            if (count < 0 || done < count) {
                out += with;
                ++done;
            }
            utf8_append(out, cp);
        }
        if (count < 0 || done < count) out += with;
        return out;
    }
    size_t pos = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        size_t hit = s.find(old, pos);
        if (hit == std::string::npos) break;
        out.append(s, pos, hit - pos);
        out += with;
        pos = hit + old.size();
        ++done;
    }
    out.append(s, pos, std::string::npos);
    return out;
}

Value call_str_method(const Value& self, const std::string& name, const CallArgs& args) {
    const std::string& s = self.as_string();
    auto chars_arg = [&](std::u32string& storage) -> const std::u32string* {
        const Value* c = args.get(0, "chars");
        if (!c || c->is_none()) return nullptr;
        storage = utf8_decode(arg_string(*c, name.c_str()));
        return &storage;
    };
    std::u32string chars;
    if (name == "strip") return Value(python_strip(s, chars_arg(chars), true, true));
    if (name == "lstrip") return Value(python_strip(s, chars_arg(chars), true, false));
    if (name == "rstrip") return Value(python_strip(s, chars_arg(chars), false, true));
    if (name == "split" || name == "rsplit") {
        const Value* sep = args.get(0, "sep");
        const Value* maxsplit = args.get(1, "maxsplit");
        std::string sep_text = sep && !sep->is_none() ? arg_string(*sep, "split") : "";
        int64_t limit = maxsplit ? arg_int(*maxsplit, "split") : -1;
        if (name == "rsplit" && limit >= 0) {
            // rsplit with a limit splits from the right: reverse, split, reverse back.
            std::u32string rev = utf8_decode(s);
            std::reverse(rev.begin(), rev.end());
            std::u32string rsep = utf8_decode(sep_text);
            std::reverse(rsep.begin(), rsep.end());
            std::string rsep8 = utf8_encode(rsep);
            ValueList parts = python_split(utf8_encode(rev), sep && !sep->is_none() ? &rsep8 : nullptr, limit);
            std::reverse(parts.begin(), parts.end());
            for (Value& p : parts) {
                std::u32string cps = utf8_decode(p.as_string());
                std::reverse(cps.begin(), cps.end());
                p = Value(utf8_encode(cps));
            }
            return Value::list(std::move(parts));
        }
        return Value::list(python_split(s, sep && !sep->is_none() ? &sep_text : nullptr, limit));
    }
    if (name == "startswith" || name == "endswith") {
        return Value(affix_match(s, required(args, 0, "prefix", name.c_str()), name == "endswith", name.c_str()));
    }
    if (name == "replace") {
        const Value* count = args.get(2, "count");
        return Value(python_replace(s, arg_string(required(args, 0, "old", "replace"), "replace"),
                                    arg_string(required(args, 1, "new", "replace"), "replace"),
                                    count ? arg_int(*count, "replace") : -1));
    }
    if (name == "lower") return Value(python_lower(s));
    if (name == "upper") return Value(python_upper(s));
    if (name == "capitalize" || name == "title") {
        std::u32string cps = utf8_decode(s);
        bool start = true;
        for (char32_t& c : cps) {
            bool letter = lower_cp(c) != c || upper_cp(c) != c;
            c = start && letter ? upper_cp(c) : lower_cp(c);
            start = name == "title" ? !letter : false;
        }
        return Value(utf8_encode(cps));
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "count") {
        std::string sub = arg_string(required(args, 0, "sub", name.c_str()), name.c_str());
        if (name == "count") {
            if (sub.empty()) return Value(static_cast<int64_t>(utf8_length(s) + 1));
            int64_t n = 0;
            for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
            return Value(n);
        }
        size_t hit = name == "rfind" ? s.rfind(sub) : s.find(sub);
        if (hit == std::string::npos) {
            if (name == "index") raise(ErrorType::value_error, "substring not found");
            return Value(int64_t{-1});
        }
        return Value(static_cast<int64_t>(utf8_length(std::string_view(s).substr(0, hit))));
    }
    if (name == "join") {
        std::string out;
        ValueList items = iterate(required(args, 0, "iterable", "join"));
        for (size_t i = 0; i < items.size(); ++i) {
            if (!items[i].is_string()) {
                raise(ErrorType::type_error, fmt::format("sequence item {}: expected str instance, {} found", i,
                                                         python_type_name(items[i])));
            }
            if (i) out += s;
            out += items[i].as_string();
        }
        return Value(std::move(out));
    }
    if (name == "splitlines") {
        ValueList lines;
        std::string line;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] == '\n' || s[i] == '\r') {
                lines.emplace_back(line);
                line.clear();
                if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
            } else {
                line.push_back(s[i]);
            }
        }
        if (!line.empty()) lines.emplace_back(line);
        return Value::list(std::move(lines));
    }
    // The is* predicates, over ASCII classes (enough for role names and ids).
    auto all_of = [&](auto pred) {
        std::u32string cps = utf8_decode(s);
        return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), pred));
    };
    if (name == "isdigit") return all_of([](char32_t c) { return c >= '0' && c <= '9'; });
    if (name == "isspace") return all_of([](char32_t c) { return is_python_space(c); });
    if (name == "isalpha") return all_of([](char32_t c) { return lower_cp(c) != c || upper_cp(c) != c; });
    if (name == "isalnum") {
        return all_of([](char32_t c) { return (c >= '0' && c <= '9') || lower_cp(c) != c || upper_cp(c) != c; });
    }
    if (name == "islower") return Value(python_lower(s) == s && python_upper(s) != s);
    if (name == "isupper") return Value(python_upper(s) == s && python_lower(s) != s);
    raise(ErrorType::type_error, fmt::format("str.{} is not supported", name));
}

Value call_dict_method(const Value& self, const std::string& name, const CallArgs& args) {
    const auto& entries = self.dict_data().entries;
    if (name == "get") {
        const Value* found = self.dict_find(required(args, 0, "key", "get"));
        if (found) return *found;
        const Value* fallback = args.get(1, "default");
        return fallback ? *fallback : Value::none();
    }
    // items()/keys()/values() are views in Python; a list prints differently (dict_items([...]))
    // but iterates, tests and measures the same, which is all templates do with them.
    ValueList out;
    for (const auto& [k, v] : entries) {
        if (name == "items") out.push_back(Value::tuple({k, v}));
        else if (name == "keys") out.push_back(k);
        else out.push_back(v);
    }
    return Value::list(std::move(out));
}

Value call_list_method(const Value& self, const std::string& name, const CallArgs& args) {
    const Value& needle = required(args, 0, "value", name.c_str());
    int64_t count = 0;
    for (size_t i = 0; i < self.items().size(); ++i) {
        if (python_equal(self.items()[i], needle)) {
            if (name == "index") return Value(static_cast<int64_t>(i));
            ++count;
        }
    }
    if (name == "index") raise(ErrorType::value_error, fmt::format("{} is not in list", python_repr(needle)));
    return Value(count);
}

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

constexpr std::array<std::string_view, 23> kStrMethods = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "replace", "lower", "upper",
    "capitalize", "title", "find", "rfind", "index", "count", "join", "splitlines", "isdigit", "isspace",
    "isalpha", "isalnum", "islower"};
constexpr std::array<std::string_view, 4> kDictMethods = {"get", "items", "keys", "values"};
constexpr std::array<std::string_view, 5> kDictMutators = {"update", "pop", "popitem", "setdefault", "clear"};
constexpr std::array<std::string_view, 2> kListMethods = {"index", "count"};
constexpr std::array<std::string_view, 8> kListMutators = {"append", "extend", "insert", "pop",
                                                           "remove", "reverse", "sort", "clear"};

Value bind(const Value& self, const std::string& name, Value (*method)(const Value&, const std::string&, const CallArgs&)) {
    return Value::callable(name, [self, name, method](const CallArgs& args) { return method(self, name, args); });
}

Value missing_attribute(const Value& obj, const std::string& name) {
    return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_type_repr(obj), name));
}

Value unsafe(const Value& obj, const std::string& name) {
    return Value::undefined(fmt::format("access to attribute '{}' of '{}' object is unsafe.", name, python_type_name(obj)),
                            ErrorType::security_error);
}

}  // namespace

std::string python_lower(std::string_view s) { return map_cps(s, lower_cp); }
std::string python_upper(std::string_view s) { return map_cps(s, upper_cp); }

ValueList python_split(const std::string& s, const std::string* sep, int64_t maxsplit) {
    ValueList parts;
    if (sep) {
        if (sep->empty()) raise(ErrorType::value_error, "empty separator");
        size_t pos = 0;
        while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
            size_t hit = s.find(*sep, pos);
            if (hit == std::string::npos) break;
            parts.emplace_back(s.substr(pos, hit - pos));
            pos = hit + sep->size();
        }
        parts.emplace_back(s.substr(pos));
        return parts;
    }
    // Whitespace split: runs of whitespace separate, no empty pieces; once maxsplit pieces are
    // taken the remainder is kept as is (its trailing whitespace included).
    std::u32string cps = utf8_decode(s);
    size_t i = 0;
    while (true) {
        while (i < cps.size() && is_python_space(cps[i])) ++i;
        if (i >= cps.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit) {
            parts.emplace_back(utf8_encode(std::u32string_view(cps).substr(i)));
            break;
        }
        size_t j = i;
        while (j < cps.size() && !is_python_space(cps[j])) ++j;
        parts.emplace_back(utf8_encode(std::u32string_view(cps).substr(i, j - i)));
        i = j;
    }
    return parts;
}

Value get_attribute(const Value& obj, const std::string& name) {
    switch (obj.kind()) {
        case Kind::undefined: obj.fail_undefined();
        case Kind::string:
            if (contains(kStrMethods, name) || name == "isupper") return bind(obj, name, call_str_method);
            return missing_attribute(obj, name);
        case Kind::dict:
            if (contains(kDictMethods, name)) return bind(obj, name, call_dict_method);
            if (contains(kDictMutators, name)) return unsafe(obj, name);
            if (const Value* v = obj.dict_find(std::string_view(name))) return *v;
            return missing_attribute(obj, name);
        case Kind::list:
        case Kind::tuple:
            if (contains(kListMethods, name)) return bind(obj, name, call_list_method);
            if (obj.is_list() && contains(kListMutators, name)) return unsafe(obj, name);
            return missing_attribute(obj, name);
        case Kind::namespace_:
            if (const Value* v = obj.dict_find(std::string_view(name))) return *v;
            return missing_attribute(obj, name);
        default: return missing_attribute(obj, name);
    }
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) obj.fail_undefined();
    if ((obj.is_sequence() || obj.is_string()) && (key.is_int() || key.is_bool())) {
        int64_t index = key.as_int();
        if (obj.is_string()) {
            std::u32string cps = utf8_decode(obj.as_string());
            int64_t n = static_cast<int64_t>(cps.size());
            if (index < 0) index += n;
            if (index >= 0 && index < n) return Value(utf8_encode(std::u32string_view(cps).substr(static_cast<size_t>(index), 1)));
        } else {
            int64_t n = static_cast<int64_t>(obj.items().size());
            if (index < 0) index += n;
            if (index >= 0 && index < n) return obj.items()[static_cast<size_t>(index)];
        }
        return Value::undefined(fmt::format("{} has no element {}", object_type_repr(obj), python_repr(key)));
    }
    if (obj.is_dict()) {
        if (const Value* v = obj.dict_find(key)) return *v;
    }
    if (key.is_string()) return get_attribute(obj, key.as_string());
    return Value::undefined(fmt::format("{} has no element {}", object_type_repr(obj), python_repr(key)));
}

Value get_slice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                std::optional<int64_t> step_arg) {
    if (obj.is_undefined()) obj.fail_undefined();
    if (!obj.is_sequence() && !obj.is_string()) {
        return Value::undefined(fmt::format("{} has no element slice", object_type_repr(obj)));
    }
    int64_t step = step_arg.value_or(1);
    if (step == 0) raise(ErrorType::value_error, "slice step cannot be zero");
    std::u32string cps;
    int64_t len;
    if (obj.is_string()) {
        cps = utf8_decode(obj.as_string());
        len = static_cast<int64_t>(cps.size());
    } else {
        len = static_cast<int64_t>(obj.items().size());
    }
    // PySlice_AdjustIndices: clamp to [0, len] for positive steps and [-1, len-1] for negative.
    int64_t lower = step > 0 ? 0 : -1;
    int64_t upper = step > 0 ? len : len - 1;
    auto adjust = [&](std::optional<int64_t> v, int64_t fallback) {
        if (!v) return fallback;
        int64_t x = *v < 0 ? *v + len : *v;
        return std::clamp(x, lower, upper);
    };
    int64_t b = adjust(start, step > 0 ? lower : upper);
    int64_t e = adjust(stop, step > 0 ? upper : lower);
    std::u32string out_cps;
    ValueList out_items;
    for (int64_t i = b; step > 0 ? i < e : i > e; i += step) {
        if (obj.is_string()) out_cps.push_back(cps[static_cast<size_t>(i)]);
        else out_items.push_back(obj.items()[static_cast<size_t>(i)]);
    }
    if (obj.is_string()) return Value(utf8_encode(out_cps));
    return obj.is_list() ? Value::list(std::move(out_items)) : Value::tuple(std::move(out_items));
}

}  // namespace strata::chat_template
