#pragma once
// The 2-bit IQ formats of ggml: IQ2_XXS (2.06 bits per weight), IQ2_XS (2.31) and IQ2_S (2.56).
// A 256-value super-block has one fp16 scale d and 8 groups of 32 values; each group of 8 values
// is one index into a grid of magnitude patterns (quant/iq_grids.h) plus 8 signs. The dot type
// is Q8_K (quant/q8_k.h). No quantizer here: IQ quantization needs ggml's grid search.
//
//   std::vector<float> w(n);
//   dequantize_row_iq2_xxs(row_bytes, w.data(), n);
//   std::vector<BlockQ8_K> a(n / 256);
//   quantize_row_q8_k(x, a.data(), n);
//   float y = dot_iq2_xxs_q8_k(row_bytes, a.data(), n);

#include <cstdint>

namespace strata {

// Each group of 32 is 8 bytes: bytes 0-3 are the kIq2xxsGrid indices of its 4 groups of 8, bytes
// 4-7 a little-endian uint32 holding four 7-bit sign codes (bits 7l..7l+6, see kIq2SignTable)
// and, in bits 28-31, the group scale s: value = d·(s + ½)/4 · grid byte · sign.
struct BlockIq2Xxs {
    static constexpr int kValues = 256;
    uint16_t d;       // fp16
    uint8_t qs[64];
};

// Each group of 8 is a uint16: bits 0-8 the kIq2xsGrid index, bits 9-15 the 7-bit sign code.
// scales[g] holds two 4-bit scales, low nibble for the first 16 values of group g, high for the
// last 16: value = d·(s + ½)/4 · grid byte · sign.
struct BlockIq2Xs {
    static constexpr int kValues = 256;
    uint16_t d;            // fp16
    uint16_t qs[32];
    uint8_t scales[8];
};

// IQ2_S spends a whole sign byte per group of 8 (no parity trick) and 10-bit indices into
// kIq2sGrid: low 8 bits in qs[0..31], high 2 bits in qh[g] (bits 2l..2l+1 for group l of 32-group g).
// qs[32..63] are the sign bytes. Scales as in IQ2_XS.
struct BlockIq2S {
    static constexpr int kValues = 256;
    uint16_t d;            // fp16
    uint8_t qs[64];        // 32 index low bytes, then 32 sign bytes
    uint8_t qh[8];
    uint8_t scales[8];
};

// Byte counts are those of gguf/tensor_type.cpp (ggml's block_iq2_* structs).
static_assert(sizeof(BlockIq2Xxs) == 66);
static_assert(sizeof(BlockIq2Xs) == 74);
static_assert(sizeof(BlockIq2S) == 82);

// `n` is the number of values and must be a multiple of 256.
void dequantize_row_iq2_xxs(const void* src, float* dst, int64_t n);
void dequantize_row_iq2_xs(const void* src, float* dst, int64_t n);
void dequantize_row_iq2_s(const void* src, float* dst, int64_t n);

// Weight row · Q8_K activation row.
float dot_iq2_xxs_q8_k(const void* weights, const void* activation, int64_t n);
float dot_iq2_xs_q8_k(const void* weights, const void* activation, int64_t n);
float dot_iq2_s_q8_k(const void* weights, const void* activation, int64_t n);

}  // namespace strata
