#pragma once
// The 1-bit IQ formats of ggml: IQ1_S (1.56 bits per weight) and IQ1_M (1.75). Each group of 8
// values is an 11-bit index into kIq1sGrid (patterns of −1, 0, +1, quant/iq_grids.h), shifted by
// ±⅛ and scaled: value = dl·(grid + δ), δ = ±0.125. The dot type is Q8_K (quant/q8_k.h). No
// quantizer here: IQ quantization needs ggml's grid search.
//
//   std::vector<float> w(n);
//   dequantize_row_iq1_m(row_bytes, w.data(), n);
//   float y = dot_iq1_m_q8_k(row_bytes, q8_k_activation, n);

#include <cstdint>

namespace strata {

// Per group of 32 (g): qs[4g..4g+3] are the low 8 bits of its four indices; qh[g] holds bits
// 3l..3l+2 = high 3 bits of index l, bits 12-14 = the scale code s (dl = d·(2s + 1)) and bit 15 =
// the sign of δ (set: −⅛).
struct BlockIq1S {
    static constexpr int kValues = 256;
    uint16_t d;        // fp16
    uint8_t qs[32];
    uint16_t qh[8];
};

// No block-wide fp16 field: the super-block scale's 16 bits are spread over the top nibbles of
// the four little-endian uint16 words in `scales` (word k's bits 12-15 = bits 4k..4k+3 of the
// fp16). The remaining 12 bits of word k are four 3-bit scale codes, one per 16 values: word
// g/2, bits 6(g%2)..+2 for the first half of 32-group g and +3..+5 for the second; dl = d·(2s + 1).
// qh[2g + h] describes groups 2h and 2h+1 of 32-group g: low nibble for the first, high nibble
// for the second, each nibble = 3 high index bits plus, in its top bit, the sign of δ.
struct BlockIq1M {
    static constexpr int kValues = 256;
    uint8_t qs[32];
    uint8_t qh[16];
    uint8_t scales[8];
};

// Byte counts are those of gguf/tensor_type.cpp (ggml's block_iq1_* structs).
static_assert(sizeof(BlockIq1S) == 50);
static_assert(sizeof(BlockIq1M) == 56);

// `n` is the number of values and must be a multiple of 256.
void dequantize_row_iq1_s(const void* src, float* dst, int64_t n);
void dequantize_row_iq1_m(const void* src, float* dst, int64_t n);

// Weight row · Q8_K activation row.
float dot_iq1_s_q8_k(const void* weights, const void* activation, int64_t n);
float dot_iq1_m_q8_k(const void* weights, const void* activation, int64_t n);

}  // namespace strata
