#pragma once
// Q8_K: the activation format of every 256-value super-block weight type (K, IQ and ternary
// types). One float scale per 256 values (not fp16: the activation's precision is worth 2 bytes),
// the int8 quants, and the sum of each group of 16 quants so that a weight format with per-group
// minimums can subtract min·Σa without touching the quants again.
//
//   std::vector<BlockQ8_K> a(n / 256);
//   quantize_row_q8_k(x, a.data(), n);
//   // a[i].d · a[i].qs[j] ≈ x[256·i + j]

#include <cstdint>

namespace strata {

struct BlockQ8_K {
    static constexpr int kValues = 256;
    float d;
    int8_t qs[256];
    int16_t bsums[16];  // bsums[g] = Σ qs[16g .. 16g+15]
};
static_assert(sizeof(BlockQ8_K) == 292);  // gguf/tensor_type.cpp

// `n` must be a multiple of 256.
void quantize_row_q8_k(const float* src, void* dst, int64_t n);
void dequantize_row_q8_k(const void* src, float* dst, int64_t n);

}  // namespace strata
