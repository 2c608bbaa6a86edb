#pragma once
// The legacy 32-value block formats of ggml: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and the activation
// format Q8_1. A block is one fp16 scale d (plus an fp16 offset m for the "_1" kinds) and the
// quants; value = d·q (+ m). Layouts are ggml's block_q*_ structs byte for byte.
//
//   std::vector<BlockQ4_0> w(n / 32);
//   quantize_row_q4_0(x, w.data(), n);           // reference quantizer, no importance matrix
//   std::vector<BlockQ8_0> a(n / 32);
//   quantize_row_q8_0(act, a.data(), n);         // activation side of the dot product
//   float y = dot_q4_0_q8_0(w.data(), a.data(), n);

#include <cstdint>

namespace strata {

// Nibbles: value j of the block is qs[j] & 0xF, value j+16 is qs[j] >> 4. q ∈ [0, 15], value d·(q−8).
struct BlockQ4_0 {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    uint8_t qs[16];
};
// value = d·q + m, q ∈ [0, 15]; same nibble order as Q4_0.
struct BlockQ4_1 {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    uint16_t m;       // fp16, the block minimum
    uint8_t qs[16];
};
// Q4_0's nibbles plus a fifth bit per value: bit j of the little-endian 32-bit qh is the high bit
// of value j. q ∈ [0, 31], value d·(q−16).
struct BlockQ5_0 {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    uint8_t qh[4];
    uint8_t qs[16];
};
struct BlockQ5_1 {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    uint16_t m;       // fp16
    uint8_t qh[4];
    uint8_t qs[16];
};
struct BlockQ8_0 {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    int8_t qs[32];
};
// Q8_0 plus s = d·Σq, so that a dot with an offset format (Q4_1, Q5_1) gets m·Σa from one multiply.
struct BlockQ8_1 {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    uint16_t s;       // fp16
    int8_t qs[32];
};

// Byte counts are those of gguf/tensor_type.cpp (ggml's block structs).
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);

// `n` is the number of values and must be a multiple of 32 in every function below.
void dequantize_row_q4_0(const void* src, float* dst, int64_t n);
void dequantize_row_q4_1(const void* src, float* dst, int64_t n);
void dequantize_row_q5_0(const void* src, float* dst, int64_t n);
void dequantize_row_q5_1(const void* src, float* dst, int64_t n);
void dequantize_row_q8_0(const void* src, float* dst, int64_t n);
void dequantize_row_q8_1(const void* src, float* dst, int64_t n);

// Reference quantizers (ggml's quantize_row_*_ref): byte-identical to llama-quantize without an
// importance matrix. Q8_0 and Q8_1 are also the activation quantizers of the dot products.
void quantize_row_q4_0(const float* src, void* dst, int64_t n);
void quantize_row_q4_1(const float* src, void* dst, int64_t n);
void quantize_row_q5_0(const float* src, void* dst, int64_t n);
void quantize_row_q5_1(const float* src, void* dst, int64_t n);
void quantize_row_q8_0(const float* src, void* dst, int64_t n);
void quantize_row_q8_1(const float* src, void* dst, int64_t n);

// Weight row · activation row (Q8_0 for the symmetric formats, Q8_1 for the offset ones).
float dot_q4_0_q8_0(const void* weights, const void* activation, int64_t n);
float dot_q4_1_q8_1(const void* weights, const void* activation, int64_t n);
float dot_q5_0_q8_0(const void* weights, const void* activation, int64_t n);
float dot_q5_1_q8_1(const void* weights, const void* activation, int64_t n);
float dot_q8_0_q8_0(const void* weights, const void* activation, int64_t n);

}  // namespace strata
