#pragma once
// The 3-bit IQ formats of ggml: IQ3_XXS (3.06 bits per weight) and IQ3_S (3.44). A 256-value
// super-block has one fp16 scale d and 8 groups of 32 values; each group of 8 values is two
// indices into a grid of 4-magnitude patterns (quant/iq_grids.h) plus 8 signs. The dot type is
// Q8_K (quant/q8_k.h). No quantizer here: IQ quantization needs ggml's grid search.
//
//   std::vector<float> w(n);
//   dequantize_row_iq3_s(row_bytes, w.data(), n);
//   float y = dot_iq3_s_q8_k(row_bytes, q8_k_activation, n);

#include <cstdint>

namespace strata {

// qs[0..63]: kIq3xxsGrid indices, two per group of 8 (the first gives values 0-3, the second 4-7).
// qs[64..95]: per group of 32, a little-endian uint32 with four 7-bit sign codes (bits 7l..7l+6,
// see kIq2SignTable) and in bits 28-31 the group scale s: value = d·(s + ½)/2 · grid byte · sign.
struct BlockIq3Xxs {
    static constexpr int kValues = 256;
    uint16_t d;       // fp16
    uint8_t qs[96];
};

// 9-bit kIq3sGrid indices: low 8 bits in qs, the ninth in qh (bit k of qh[g] for the k-th index
// of 32-group g). One full sign byte per group of 8. scales[p] holds two 4-bit scales, low
// nibble for 32-group 2p, high for 2p+1: value = d·(2s + 1) · grid byte · sign.
struct BlockIq3S {
    static constexpr int kValues = 256;
    uint16_t d;            // fp16
    uint8_t qs[64];
    uint8_t qh[8];
    uint8_t signs[32];
    uint8_t scales[4];
};

// Byte counts are those of gguf/tensor_type.cpp (ggml's block_iq3_* structs).
static_assert(sizeof(BlockIq3Xxs) == 98);
static_assert(sizeof(BlockIq3S) == 110);

// `n` is the number of values and must be a multiple of 256.
void dequantize_row_iq3_xxs(const void* src, float* dst, int64_t n);
void dequantize_row_iq3_s(const void* src, float* dst, int64_t n);

// Weight row · Q8_K activation row.
float dot_iq3_xxs_q8_k(const void* weights, const void* activation, int64_t n);
float dot_iq3_s_q8_k(const void* weights, const void* activation, int64_t n);

}  // namespace strata
