#pragma once
// MXFP4 (OCP microscaling FP4, as in gpt-oss): 32 values share one E8M0 exponent e; each value is
// an FP4 E2M1 code. The dot type is Q8_0 (quant/legacy.h).
//
//   std::vector<BlockMxfp4> w(n / 32);
//   quantize_row_mxfp4(x, w.data(), n);
//   float y = dot_mxfp4_q8_0(w.data(), q8_0_activation, n);

#include <cstdint>

namespace strata {

// value j = e2m1(code_j)·2^(e − 127); codes of values j and j+16 share byte qs[j] (low, high nibble).
struct BlockMxfp4 {
    static constexpr int kValues = 32;
    uint8_t e;       // E8M0 shared exponent, bias 127
    uint8_t qs[16];  // E2M1 codes: bit 3 sign, bits 0-2 magnitude
};
static_assert(sizeof(BlockMxfp4) == 17);  // gguf/tensor_type.cpp

// `n` must be a multiple of 32.
void dequantize_row_mxfp4(const void* src, float* dst, int64_t n);
// ggml's reference quantizer: e from the block's largest magnitude, each code the nearest value.
void quantize_row_mxfp4(const float* src, void* dst, int64_t n);
float dot_mxfp4_q8_0(const void* weights, const void* activation, int64_t n);

}  // namespace strata
