#pragma once
// The unquantized element types: F32, F16 and BF16. Their "blocks" are single values, so
// dequantizing is a widening conversion and quantizing is a rounding one (round to nearest even,
// as ggml does). Each is its own dot type: an F16 weight row is multiplied with an F16 activation.
//
//   std::vector<uint16_t> h(n);
//   quantize_row_f16(x, h.data(), n);        // activation → F16, as ggml's CPU from_float
//   float y = dot_f16(weights, h.data(), n);

#include <cstdint>

namespace strata {

void dequantize_row_f32(const void* src, float* dst, int64_t n);
void dequantize_row_f16(const void* src, float* dst, int64_t n);
void dequantize_row_bf16(const void* src, float* dst, int64_t n);

void quantize_row_f32(const float* src, void* dst, int64_t n);
void quantize_row_f16(const float* src, void* dst, int64_t n);
void quantize_row_bf16(const float* src, void* dst, int64_t n);

// Products are summed in double, like ggml's scalar ggml_vec_dot_f16/bf16.
float dot_f32(const void* weights, const void* activation, int64_t n);
float dot_f16(const void* weights, const void* activation, int64_t n);
float dot_bf16(const void* weights, const void* activation, int64_t n);

}  // namespace strata
