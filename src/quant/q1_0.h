#pragma once
// Q1_0 (ggml type 41): one sign bit per value and one fp16 scale per 128 values, 1.125 bits a
// value. Every value is ±d; d is the block's mean magnitude. The dot type is Q8_0 (quant/legacy.h):
// one Q1_0 block meets four Q8_0 blocks.
//
//   std::vector<BlockQ1_0> w(n / 128);
//   quantize_row_q1_0(x, w.data(), n);
//   float y = dot_q1_0_q8_0(w.data(), q8_0_activation, n);

#include <cstdint>

namespace strata {

// Value j is +d when bit j % 8 of qs[j / 8] is set, −d when it is clear.
struct BlockQ1_0 {
    static constexpr int kValues = 128;
    uint16_t d;  // fp16
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ1_0) == 18);  // gguf/tensor_type.cpp

// `n` must be a multiple of 128.
void dequantize_row_q1_0(const void* src, float* dst, int64_t n);
// ggml's reference quantizer: d = Σ|x| / 128 (summed in index order), bit set where x ≥ 0.
void quantize_row_q1_0(const float* src, void* dst, int64_t n);
float dot_q1_0_q8_0(const void* weights, const void* activation, int64_t n);

}  // namespace strata
