#pragma once
// The K-quant formats Q2_K … Q6_K: 256-value super-blocks split into 16 or 8 sub-blocks, each
// with a small integer scale (and min) that is itself scaled by the super-block's fp16 d (dmin).
// The dot type of all of them is Q8_K (quant/q8_k.h). Layouts are ggml's block_q*_K structs.
//
//   std::vector<BlockQ4_K> w(n / 256);
//   quantize_row_q4_k(x, w.data(), n);           // reference quantizer, no importance matrix
//   std::vector<BlockQ8_K> a(n / 256);
//   quantize_row_q8_k(act, a.data(), n);
//   float y = dot_q4_k_q8_k(w.data(), a.data(), n);
//
// Quant order: the 2-bit planes of Q2_K/Q3_K (and Q6_K's high bits) take 128 values per 32
// bytes: value 32·s + l of a 128-value half sits in byte l at bit shift 2·s. 4-bit quants take 64
// values per 32 bytes: low nibbles are values 0-31, high nibbles 32-63.

#include <cstdint>

namespace strata {

// 16 sub-blocks of 16; value = d·(scales & 0xF)·q − dmin·(scales >> 4), q ∈ [0, 3].
struct BlockQ2_K {
    static constexpr int kValues = 256;
    uint8_t scales[16];  // low nibble: scale, high nibble: min
    uint8_t qs[64];      // 2-bit quants
    uint16_t d;          // fp16
    uint16_t dmin;       // fp16
};
// 16 sub-blocks of 16; value = d·(s − 32)·(q − 4·!high), q ∈ [0, 3], s a 6-bit scale.
struct BlockQ3_K {
    static constexpr int kValues = 256;
    uint8_t hmask[32];   // bit b of byte l: high bit of value 32·b + l (set means no −4)
    uint8_t qs[64];      // low 2 bits
    uint8_t scales[12];  // 16 × 6 bits: low nibbles in bytes 0-7, high 2-bit pairs in bytes 8-11
    uint16_t d;          // fp16
};
// 8 sub-blocks of 32; value = d·sc·q − dmin·m, q ∈ [0, 15], sc and m 6-bit.
struct BlockQ4_K {
    static constexpr int kValues = 256;
    uint16_t d;          // fp16
    uint16_t dmin;       // fp16
    uint8_t scales[12];  // see set_scale_min_k4 in quant/k_quant_search.h
    uint8_t qs[128];
};
// Q4_K plus a fifth bit: bit b of qh[l] is the high bit of value 32·b + l.
struct BlockQ5_K {
    static constexpr int kValues = 256;
    uint16_t d;          // fp16
    uint16_t dmin;       // fp16
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
};
// 16 sub-blocks of 16; value = d·scale·(q − 32), q ∈ [0, 63], scale int8.
struct BlockQ6_K {
    static constexpr int kValues = 256;
    uint8_t ql[128];     // low 4 bits
    uint8_t qh[64];      // high 2 bits
    int8_t scales[16];
    uint16_t d;          // fp16
};

// Byte counts are those of gguf/tensor_type.cpp (ggml's block structs).
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

// `n` is the number of values and must be a multiple of 256 in every function below.
void dequantize_row_q2_k(const void* src, float* dst, int64_t n);
void dequantize_row_q3_k(const void* src, float* dst, int64_t n);
void dequantize_row_q4_k(const void* src, float* dst, int64_t n);
void dequantize_row_q5_k(const void* src, float* dst, int64_t n);
void dequantize_row_q6_k(const void* src, float* dst, int64_t n);

// Reference quantizers (ggml's quantize_row_*_K_ref, what llama-quantize does without an
// importance matrix).
void quantize_row_q2_k(const float* src, void* dst, int64_t n);
void quantize_row_q3_k(const float* src, void* dst, int64_t n);
void quantize_row_q4_k(const float* src, void* dst, int64_t n);
void quantize_row_q5_k(const float* src, void* dst, int64_t n);
void quantize_row_q6_k(const float* src, void* dst, int64_t n);

// Weight row · Q8_K activation row.
float dot_q2_k_q8_k(const void* weights, const void* activation, int64_t n);
float dot_q3_k_q8_k(const void* weights, const void* activation, int64_t n);
float dot_q4_k_q8_k(const void* weights, const void* activation, int64_t n);
float dot_q5_k_q8_k(const void* weights, const void* activation, int64_t n);
float dot_q6_k_q8_k(const void* weights, const void* activation, int64_t n);

}  // namespace strata
