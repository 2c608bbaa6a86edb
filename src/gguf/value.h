#pragma once
// One metadata value of a GGUF file: a scalar, a string or a (possibly nested) array.
//
//   const GgufValue* v = file.find("qwen3moe.block_count");
//   if (v && v->is_integer()) n_layers = v->as_int();

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata {

// Value type ids as stored in the file.
enum class GgufValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
constexpr uint32_t kGgufValueTypeCount = 13;
std::string_view gguf_value_type_name(GgufValueType t);

struct GgufValue;
struct GgufArray {
    GgufValueType element_type = GgufValueType::U8;
    std::vector<GgufValue> items;
};

struct GgufValue {
    GgufValueType type = GgufValueType::U8;
    // Integers are kept widened (u64 in the uint64_t slot, every other integer type and bool in
    // int64_t), floats as double; `type` says what the file had.
    std::variant<int64_t, uint64_t, double, std::string, GgufArray> data;

    bool is_integer() const;
    bool is_float() const { return type == GgufValueType::F32 || type == GgufValueType::F64; }
    bool is_string() const { return type == GgufValueType::STRING; }
    bool is_array() const { return type == GgufValueType::ARRAY; }
    bool is_bool() const { return type == GgufValueType::BOOL; }

    int64_t as_int() const;   // any integer or bool type (u64 above INT64_MAX saturates)
    uint64_t as_uint() const; // any integer or bool type (negative values clamp to 0)
    double as_float() const;  // any integer or float type
    const std::string& as_string() const { return std::get<std::string>(data); }
    const GgufArray& as_array() const { return std::get<GgufArray>(data); }

    // Short human-readable form for `strata inspect` (long arrays abbreviated).
    std::string to_display_string(size_t max_items = 8) const;

    static GgufValue make_int(GgufValueType t, int64_t v);
    static GgufValue make_uint64(uint64_t v);
    static GgufValue make_float(GgufValueType t, double v);
    static GgufValue make_bool(bool v);
    static GgufValue make_string(std::string v);
    static GgufValue make_array(GgufValueType element_type, std::vector<GgufValue> items);
};

}  // namespace strata
