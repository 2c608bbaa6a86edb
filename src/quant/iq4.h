#pragma once
// The 4-bit non-linear formats of ggml: IQ4_NL (32-value blocks, 4.5 bits per weight, dot type
// Q8_0) and IQ4_XS (256-value super-blocks, 4.25 bits, dot type Q8_K). A 4-bit code selects one
// of 16 non-uniform levels (kIq4nlValues, quant/iq_grids.h), denser near zero where weights are.
// No quantizer here (ggml's searches the scale per block).
//
//   std::vector<float> w(n);
//   dequantize_row_iq4_nl(row_bytes, w.data(), n);
//   float y = dot_iq4_nl_q8_0(row_bytes, q8_0_activation, n);   // quant/legacy.h's BlockQ8_0

#include <cstdint>

namespace strata {

// value j = d·kIq4nlValues[code j]; codes of values j and j+16 share byte qs[j] (low, high nibble).
struct BlockIq4Nl {
    static constexpr int kValues = 32;
    uint16_t d;       // fp16
    uint8_t qs[16];
};

// Eight IQ4_NL-like groups of 32 with 6-bit signed scales instead of fp16 ones: the scale code of
// group g is (scales_l[g/2] >> 4(g%2)) & 0xF plus ((scales_h >> 2g) & 3) << 4, and group g's
// values are d·(code − 32)·kIq4nlValues[nibble], nibbles laid out as in IQ4_NL in qs[16g..16g+15].
struct BlockIq4Xs {
    static constexpr int kValues = 256;
    uint16_t d;            // fp16
    uint16_t scales_h;
    uint8_t scales_l[4];
    uint8_t qs[128];
};

// Byte counts are those of gguf/tensor_type.cpp (ggml's block_iq4_* structs).
static_assert(sizeof(BlockIq4Nl) == 18);
static_assert(sizeof(BlockIq4Xs) == 136);

// `n` is the number of values: a multiple of 32 for IQ4_NL, of 256 for IQ4_XS.
void dequantize_row_iq4_nl(const void* src, float* dst, int64_t n);
void dequantize_row_iq4_xs(const void* src, float* dst, int64_t n);

float dot_iq4_nl_q8_0(const void* weights, const void* activation, int64_t n);
float dot_iq4_xs_q8_k(const void* weights, const void* activation, int64_t n);

}  // namespace strata
