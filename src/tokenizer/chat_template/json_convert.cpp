#include "tokenizer/chat_template/json_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tokenizer/chat_template/utf8.h"

namespace strata::chat_template {

Value value_from_json(const nlohmann::ordered_json& json) {
    switch (json.type()) {
        case nlohmann::ordered_json::value_t::null: return Value::none();
        case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer: return Value(json.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned:
            return Value(static_cast<int64_t>(json.get<uint64_t>()));
        case nlohmann::ordered_json::value_t::number_float: return Value(json.get<double>());
        case nlohmann::ordered_json::value_t::string: return Value(json.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            ValueList items;
            items.reserve(json.size());
            for (const auto& item : json) items.push_back(value_from_json(item));
            return Value::list(std::move(items));
        }
        case nlohmann::ordered_json::value_t::object: {
            Value d = Value::dict();
            for (const auto& [key, item] : json.items()) d.dict_set(Value(key), value_from_json(item));
            return d;
        }
        default: return Value::none();  // binary / discarded: not produced by JSON text
    }
}

namespace {

void append_json_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out.push_back('"');
    for (char32_t cp : utf8_decode(s)) {
        switch (cp) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (cp < 0x20 || (ensure_ascii && cp > 0x7E)) {
                    if (cp >= 0x10000) {  // ensure_ascii writes astral code points as surrogate pairs
                        char32_t v = cp - 0x10000;
                        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                    } else {
                        out += fmt::format("\\u{:04x}", static_cast<uint32_t>(cp));
                    }
                } else {
                    utf8_append(out, cp);
                }
        }
    }
    out.push_back('"');
}

std::string json_float(double f) {
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f < 0 ? "-Infinity" : "Infinity";
    return python_float_repr(f);
}

// Dict keys: json.dumps accepts str, int, float, bool and None keys and converts them to strings.
std::string json_key(const Value& key) {
    switch (key.kind()) {
        case Kind::string: return key.as_string();
        case Kind::boolean: return key.as_bool() ? "true" : "false";
        case Kind::integer: return std::to_string(key.as_int());
        case Kind::floating: return json_float(key.as_double());
        case Kind::none: return "null";
        default:
            raise(ErrorType::type_error,
                  fmt::format("keys must be str, int, float, bool or None, not {}", python_type_name(key)));
    }
}

class JsonWriter {
public:
    explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {
        item_sep_ = options.item_separator.value_or(options.indent ? "," : ", ");
        key_sep_ = options.key_separator.value_or(": ");
    }

    void write(const Value& v, int depth) {
        switch (v.kind()) {
            case Kind::none: out_ += "null"; return;
            case Kind::boolean: out_ += v.as_bool() ? "true" : "false"; return;
            case Kind::integer: out_ += std::to_string(v.as_int()); return;
            case Kind::floating: out_ += json_float(v.as_double()); return;
            case Kind::string: append_json_string(out_, v.as_string(), options_.ensure_ascii); return;
            case Kind::list:
            case Kind::tuple: {
                if (v.items().empty()) {
                    out_ += "[]";
                    return;
                }
                out_ += "[";
                for (size_t i = 0; i < v.items().size(); ++i) {
                    if (i) out_ += item_sep_;
                    newline(depth + 1);
                    write(v.items()[i], depth + 1);
                }
                newline(depth);
                out_ += "]";
                return;
            }
            case Kind::dict: {
                auto entries = v.dict_data().entries;
                if (entries.empty()) {
                    out_ += "{}";
                    return;
                }
                if (options_.sort_keys) {
                    std::stable_sort(entries.begin(), entries.end(),
                                     [](const auto& a, const auto& b) { return python_less(a.first, b.first); });
                }
                out_ += "{";
                for (size_t i = 0; i < entries.size(); ++i) {
                    if (i) out_ += item_sep_;
                    newline(depth + 1);
                    append_json_string(out_, json_key(entries[i].first), options_.ensure_ascii);
                    out_ += key_sep_;
                    write(entries[i].second, depth + 1);
                }
                newline(depth);
                out_ += "}";
                return;
            }
            default:
                raise(ErrorType::type_error,
                      fmt::format("Object of type {} is not JSON serializable", python_type_name(v)));
        }
    }

    std::string take() { return std::move(out_); }

private:
    void newline(int depth) {
        if (!options_.indent) return;
        out_.push_back('\n');
        out_.append(static_cast<size_t>(std::max(0, *options_.indent) * depth), ' ');
    }

    const JsonDumpOptions& options_;
    std::string item_sep_;
    std::string key_sep_;
    std::string out_;
};

}  // namespace

std::string python_json_dumps(const Value& v, const JsonDumpOptions& options) {
    JsonWriter writer(options);
    writer.write(v, 0);
    return writer.take();
}

}  // namespace strata::chat_template
