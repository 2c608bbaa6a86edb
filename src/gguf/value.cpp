#include "gguf/value.h"

#include <fmt/format.h>

#include <limits>

namespace strata {

std::string_view gguf_value_type_name(GgufValueType t) {
    static constexpr std::string_view kNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                  "bool", "string", "array", "u64", "i64", "f64"};
    auto i = static_cast<uint32_t>(t);
    return i < kGgufValueTypeCount ? kNames[i] : std::string_view("unknown");
}

bool GgufValue::is_integer() const {
    switch (type) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::U16: case GgufValueType::I16:
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::U64: case GgufValueType::I64:
            return true;
        default:
            return false;
    }
}

int64_t GgufValue::as_int() const {
    if (const auto* u = std::get_if<uint64_t>(&data)) {
        return *u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                                : static_cast<int64_t>(*u);
    }
    if (const auto* i = std::get_if<int64_t>(&data)) return *i;
    if (const auto* d = std::get_if<double>(&data)) return static_cast<int64_t>(*d);
    return 0;
}

uint64_t GgufValue::as_uint() const {
    if (const auto* u = std::get_if<uint64_t>(&data)) return *u;
    if (const auto* i = std::get_if<int64_t>(&data)) return *i < 0 ? 0 : static_cast<uint64_t>(*i);
    if (const auto* d = std::get_if<double>(&data)) return *d < 0 ? 0 : static_cast<uint64_t>(*d);
    return 0;
}

double GgufValue::as_float() const {
    if (const auto* d = std::get_if<double>(&data)) return *d;
    if (const auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
    if (const auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
    return 0.0;
}

std::string GgufValue::to_display_string(size_t max_items) const {
    switch (type) {
        case GgufValueType::BOOL:
            return as_int() ? "true" : "false";
        case GgufValueType::F32:
        case GgufValueType::F64:
            return fmt::format("{:g}", as_float());
        case GgufValueType::STRING: {
            const std::string& s = as_string();
            std::string shown = s.size() > 80 ? s.substr(0, 77) + "..." : s;
            std::string escaped;
            for (char c : shown) {
                if (c == '\n') escaped += "\\n";
                else if (c == '"') escaped += "\\\"";
                else escaped += c;
            }
            return fmt::format("\"{}\"", escaped);
        }
        case GgufValueType::ARRAY: {
            const GgufArray& a = as_array();
            std::string out = fmt::format("{}[{}] [", gguf_value_type_name(a.element_type), a.items.size());
            for (size_t i = 0; i < a.items.size() && i < max_items; ++i) {
                if (i) out += ", ";
                out += a.items[i].to_display_string(max_items);
            }
            if (a.items.size() > max_items) out += ", ...";
            return out + "]";
        }
        case GgufValueType::U64:
            return fmt::format("{}", as_uint());
        default:
            return fmt::format("{}", as_int());
    }
}

GgufValue GgufValue::make_int(GgufValueType t, int64_t v) { return GgufValue{t, v}; }
GgufValue GgufValue::make_uint64(uint64_t v) { return GgufValue{GgufValueType::U64, v}; }
GgufValue GgufValue::make_float(GgufValueType t, double v) { return GgufValue{t, v}; }
GgufValue GgufValue::make_bool(bool v) { return GgufValue{GgufValueType::BOOL, int64_t(v ? 1 : 0)}; }
GgufValue GgufValue::make_string(std::string v) { return GgufValue{GgufValueType::STRING, std::move(v)}; }
GgufValue GgufValue::make_array(GgufValueType element_type, std::vector<GgufValue> items) {
    return GgufValue{GgufValueType::ARRAY, GgufArray{element_type, std::move(items)}};
}

}  // namespace strata
