#pragma once
// The element type of a KV cache, host or device: the one enum, name table and row-size rule that
// the CPU cache (kv_cache.h), the GPU cache (backend/gpu/gpu_ops.h), the planner and the
// --kv-type flag share. Plain C++ without the status header, so that CUDA/HIP sources include it.
//
//   KvCacheType t = kv_type_from_name("q8_0").value();
//   kv_row_bytes(t, 512);      // 544: sixteen 34-byte blocks
//   kv_type_fits(t, 128, 128); // heads of whole blocks

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace strata {

// f32 keeps the attention exact; f16 halves the cache (and what a decode step reads of it) at a
// rounding of 2^-11 relative per element, as llama.cpp's default. q8_0 (ggml's blocks: 32 int8
// values and an f16 scale, 34 bytes) takes 53% of f16, at a rounding of up to 1/254 of each block's
// largest magnitude; it needs head dims that are multiples of 32, so that every head starts on a
// block (kv_type_fits).
enum class KvCacheType { F32, F16, Q8_0 };

inline constexpr std::array<std::pair<std::string_view, KvCacheType>, 3> kKvTypeNames{{
    {"f16", KvCacheType::F16},
    {"f32", KvCacheType::F32},
    {"q8_0", KvCacheType::Q8_0},
}};

inline constexpr std::string_view kv_type_name(KvCacheType type) {
    for (const auto& [name, t] : kKvTypeNames) {
        if (t == type) return name;
    }
    return "?";
}

inline constexpr std::optional<KvCacheType> kv_type_from_name(std::string_view name) {
    for (const auto& [n, t] : kKvTypeNames) {
        if (n == name) return t;
    }
    return std::nullopt;
}

// Bytes of one row of dim elements. A q8_0 row is whole blocks: a partial block at the end would
// still take a block (only a plan asks for such rows; a cache refuses them, kv_type_fits).
inline constexpr int64_t kv_row_bytes(KvCacheType type, int64_t dim) {
    switch (type) {
        case KvCacheType::F32: return 4 * dim;
        case KvCacheType::F16: return 2 * dim;
        case KvCacheType::Q8_0: return (dim + 31) / 32 * 34;
    }
    return 4 * dim;
}

// Whether rows of heads of these dimensions can be kept in this type.
inline constexpr bool kv_type_fits(KvCacheType type, int64_t head_dim_k, int64_t head_dim_v) {
    return type != KvCacheType::Q8_0 || (head_dim_k % 32 == 0 && head_dim_v % 32 == 0);
}

}  // namespace strata
