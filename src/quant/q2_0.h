#pragma once
// Q2_0 (ggml type 42): a 2-bit code per value and one fp16 scale per 64 values, 2.25 bits a
// value. Code q means (q − 1)·d, so the levels are −d, 0, +d and +2d; ggml's quantizer takes d as
// the block maximum and so writes ternary data (+2d never comes out of it, but files may hold it).
// The dot type is Q8_0 (quant/legacy.h): one Q2_0 block meets two Q8_0 blocks.
//
//   std::vector<BlockQ2_0> w(n / 64);
//   quantize_row_q2_0(x, w.data(), n);
//   float y = dot_q2_0_q8_0(w.data(), q8_0_activation, n);

#include <cstdint>

namespace strata {

// Value j is code (qs[j / 4] >> 2·(j % 4)) & 3.
struct BlockQ2_0 {
    static constexpr int kValues = 64;
    uint16_t d;  // fp16
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ2_0) == 18);  // gguf/tensor_type.cpp

// `n` must be a multiple of 64.
void dequantize_row_q2_0(const void* src, float* dst, int64_t n);
// ggml's reference quantizer: d = max |x|, code = roundf(x / d) + 1 clamped to 0..3.
void quantize_row_q2_0(const float* src, void* dst, int64_t n);
float dot_q2_0_q8_0(const void* weights, const void* activation, int64_t n);

}  // namespace strata
