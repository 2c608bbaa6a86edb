#pragma once
// Device-side dequantization of the GGUF weight formats, 32 consecutive values at a time: every
// supported format's row is a whole number of 32-value chunks (a legacy block, a quarter or an
// eighth of a K-quant super-block, 32 floats), so one lane of a warp owns one chunk at a time and
// the kernels (matmul, get_rows) are written once for all formats. The block structs are the
// host's (quant/*.h); each function mirrors that format's scalar reference dequantizer. The
// i-quants, the ternary formats, MXFP4, NVFP4, Q1_0 and Q2_0 live in kernels/dequant_iq.cuh.
//
//   float v[32];
//   dequant_chunk<TensorType::Q4_K>(row, chunk, v);   // values 32·chunk .. 32·chunk + 31 of the row
//   dispatch_weight_type(w.type, [&](auto tag) { kernel<decltype(tag)::value><<<...>>>(...); });

#include <cstdint>
#include <type_traits>

#include "backend/gpu/kernels/dequant_iq.cuh"
#include "backend/gpu/vendor/runtime.h"
#include "gguf/tensor_type.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"

namespace strata::gpu {

template <TensorType T> using TypeTag = std::integral_constant<TensorType, T>;

// The one list of formats the GPU kernels read. Returns false for any other type.
template <typename F> bool dispatch_weight_type(TensorType t, F&& f) {
    using T = TensorType;
    switch (t) {
        case T::F32: f(TypeTag<T::F32>{}); return true;
        case T::F16: f(TypeTag<T::F16>{}); return true;
        case T::BF16: f(TypeTag<T::BF16>{}); return true;
        case T::Q4_0: f(TypeTag<T::Q4_0>{}); return true;
        case T::Q4_1: f(TypeTag<T::Q4_1>{}); return true;
        case T::Q5_0: f(TypeTag<T::Q5_0>{}); return true;
        case T::Q5_1: f(TypeTag<T::Q5_1>{}); return true;
        case T::Q8_0: f(TypeTag<T::Q8_0>{}); return true;
        case T::Q2_K: f(TypeTag<T::Q2_K>{}); return true;
        case T::Q3_K: f(TypeTag<T::Q3_K>{}); return true;
        case T::Q4_K: f(TypeTag<T::Q4_K>{}); return true;
        case T::Q5_K: f(TypeTag<T::Q5_K>{}); return true;
        case T::Q6_K: f(TypeTag<T::Q6_K>{}); return true;
        case T::IQ1_S: f(TypeTag<T::IQ1_S>{}); return true;
        case T::IQ1_M: f(TypeTag<T::IQ1_M>{}); return true;
        case T::IQ2_XXS: f(TypeTag<T::IQ2_XXS>{}); return true;
        case T::IQ2_XS: f(TypeTag<T::IQ2_XS>{}); return true;
        case T::IQ2_S: f(TypeTag<T::IQ2_S>{}); return true;
        case T::IQ3_XXS: f(TypeTag<T::IQ3_XXS>{}); return true;
        case T::IQ3_S: f(TypeTag<T::IQ3_S>{}); return true;
        case T::IQ4_NL: f(TypeTag<T::IQ4_NL>{}); return true;
        case T::IQ4_XS: f(TypeTag<T::IQ4_XS>{}); return true;
        case T::TQ1_0: f(TypeTag<T::TQ1_0>{}); return true;
        case T::TQ2_0: f(TypeTag<T::TQ2_0>{}); return true;
        case T::MXFP4: f(TypeTag<T::MXFP4>{}); return true;
        case T::NVFP4: f(TypeTag<T::NVFP4>{}); return true;
        case T::Q1_0: f(TypeTag<T::Q1_0>{}); return true;
        case T::Q2_0: f(TypeTag<T::Q2_0>{}); return true;
        default: return false;
    }
}

__device__ __forceinline__ float h2f(uint16_t h) { return vendor::half_bits_to_float(h); }

// The float types, whose rows may end in a part chunk (gpu_supports_rows): value i of a row.
constexpr bool is_float_weight(TensorType t) { return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16; }
template <TensorType T> __device__ __forceinline__ float dequant_value(const uint8_t* row, int64_t i) {
    if constexpr (T == TensorType::F32) {
        return reinterpret_cast<const float*>(row)[i];
    } else if constexpr (T == TensorType::F16) {
        return h2f(reinterpret_cast<const uint16_t*>(row)[i]);
    } else {
        return __uint_as_float(static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(row)[i]) << 16);
    }
}

// 6-bit scale and min j of a Q4_K/Q5_K super-block (quant/k_quant_search.h get_scale_min_k4).
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* packed, int& scale, int& min) {
    if (j < 4) {
        scale = packed[j] & 63;
        min = packed[j + 4] & 63;
    } else {
        scale = (packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4);
        min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
    }
}

template <TensorType T>
__device__ __forceinline__ void dequant_chunk(const uint8_t* row, int64_t chunk, float* v) {
    using TT = TensorType;
    if constexpr (T == TT::F32) {
        const float4* p = reinterpret_cast<const float4*>(row) + chunk * 8;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const float4 f = p[i];
            v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
        }
    } else if constexpr (T == TT::F16 || T == TT::BF16) {
        const uint4* p = reinterpret_cast<const uint4*>(row) + chunk * 4;  // 8 halves per uint4
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const uint4 u = p[i];
            const uint32_t words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const uint16_t lo = static_cast<uint16_t>(words[k] & 0xFFFF), hi = static_cast<uint16_t>(words[k] >> 16);
                if constexpr (T == TT::F16) {
                    v[8 * i + 2 * k] = h2f(lo), v[8 * i + 2 * k + 1] = h2f(hi);
                } else {
                    v[8 * i + 2 * k] = __uint_as_float(static_cast<uint32_t>(lo) << 16);
                    v[8 * i + 2 * k + 1] = __uint_as_float(static_cast<uint32_t>(hi) << 16);
                }
            }
        }
    } else if constexpr (T == TT::Q4_0 || T == TT::Q4_1) {
        using B = std::conditional_t<T == TT::Q4_0, BlockQ4_0, BlockQ4_1>;
        const B& b = reinterpret_cast<const B*>(row)[chunk];
        const float d = h2f(b.d);
        float m = -8.0f * d;  // Q4_0: d·(q − 8)
        if constexpr (T == TT::Q4_1) m = h2f(b.m);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            v[j] = static_cast<float>(b.qs[j] & 0x0F) * d + m;
            v[j + 16] = static_cast<float>(b.qs[j] >> 4) * d + m;
        }
    } else if constexpr (T == TT::Q5_0 || T == TT::Q5_1) {
        using B = std::conditional_t<T == TT::Q5_0, BlockQ5_0, BlockQ5_1>;
        const B& b = reinterpret_cast<const B*>(row)[chunk];
        const float d = h2f(b.d);
        float m = -16.0f * d;  // Q5_0: d·(q − 16)
        if constexpr (T == TT::Q5_1) m = h2f(b.m);
        const uint32_t qh = b.qh[0] | (b.qh[1] << 8) | (b.qh[2] << 16) | (static_cast<uint32_t>(b.qh[3]) << 24);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const int q0 = (b.qs[j] & 0x0F) | (((qh >> j) << 4) & 0x10);
            const int q1 = (b.qs[j] >> 4) | ((qh >> (j + 12)) & 0x10);
            v[j] = static_cast<float>(q0) * d + m;
            v[j + 16] = static_cast<float>(q1) * d + m;
        }
    } else if constexpr (T == TT::Q8_0) {
        const BlockQ8_0& b = reinterpret_cast<const BlockQ8_0*>(row)[chunk];
        const float d = h2f(b.d);
#pragma unroll
        for (int j = 0; j < 32; ++j) v[j] = static_cast<float>(b.qs[j]) * d;
    } else if constexpr (T == TT::Q2_K || T == TT::Q3_K) {
        // 16-value sub-blocks; 2-bit planes: value 32·s + l of a 128-value half is byte l at shift 2·s.
        using B = std::conditional_t<T == TT::Q2_K, BlockQ2_K, BlockQ3_K>;
        const B& b = reinterpret_cast<const B*>(row)[chunk / 8];
        const int c = static_cast<int>(chunk % 8);  // values 32c .. 32c + 31 of the super-block
        const uint8_t* q = b.qs + 32 * (c / 4);
        const int shift = 2 * (c % 4);
        const float d = h2f(b.d);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int sub = 2 * c + half;
            float dl, ml = 0.0f;
            if constexpr (T == TT::Q2_K) {
                dl = d * static_cast<float>(b.scales[sub] & 0xF);
                ml = h2f(b.dmin) * static_cast<float>(b.scales[sub] >> 4);
            } else {
                const int low = sub < 8 ? b.scales[sub] & 0xF : b.scales[sub - 8] >> 4;
                const int high = (b.scales[8 + sub % 4] >> (2 * (sub / 4))) & 3;
                dl = d * static_cast<float>((low | (high << 4)) - 32);
            }
#pragma unroll
            for (int l = 16 * half; l < 16 * half + 16; ++l) {
                int qv = (q[l] >> shift) & 3;
                if constexpr (T == TT::Q3_K) qv -= ((b.hmask[l] >> c) & 1) ? 0 : 4;
                v[l] = dl * static_cast<float>(qv) - ml;
            }
        }
    } else if constexpr (T == TT::Q4_K || T == TT::Q5_K) {
        // 32-value sub-blocks; 4-bit quants take 64 values per 32 bytes (low nibbles first).
        using B = std::conditional_t<T == TT::Q4_K, BlockQ4_K, BlockQ5_K>;
        const B& b = reinterpret_cast<const B*>(row)[chunk / 8];
        const int s = static_cast<int>(chunk % 8);
        int sc, mn;
        scale_min_k4(s, b.scales, sc, mn);
        const float dl = h2f(b.d) * static_cast<float>(sc), ml = h2f(b.dmin) * static_cast<float>(mn);
        const uint8_t* q = b.qs + 32 * (s / 2);
        const int shift = 4 * (s % 2);
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            int qv = (q[l] >> shift) & 0xF;
            if constexpr (T == TT::Q5_K) qv |= ((b.qh[l] >> s) & 1) << 4;
            v[l] = dl * static_cast<float>(qv) - ml;
        }
    } else if constexpr (T == TT::Q6_K) {
        const BlockQ6_K& b = reinterpret_cast<const BlockQ6_K*>(row)[chunk / 8];
        const int s = static_cast<int>(chunk % 8);
        const int half = s / 4, group = s % 4;
        const uint8_t* ql = b.ql + 64 * half + 32 * (group & 1);
        const uint8_t* qh = b.qh + 32 * half;
        const float d = h2f(b.d);
        const float d0 = d * static_cast<float>(b.scales[2 * s]), d1 = d * static_cast<float>(b.scales[2 * s + 1]);
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            const int low = group < 2 ? ql[l] & 0xF : ql[l] >> 4;
            const int high = (qh[l] >> (2 * group)) & 3;
            v[l] = (l < 16 ? d0 : d1) * static_cast<float>((low | (high << 4)) - 32);
        }
    } else if constexpr (dequant_chunk_iq_reads(T)) {
        dequant_chunk_iq<T>(row, chunk, v);
    } else {
        static_assert(T == TT::F32, "dequant_chunk: format missing from dispatch_weight_type's list");
    }
}

}  // namespace strata::gpu
