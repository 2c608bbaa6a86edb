#pragma once
// The fastest quantizer of an activation row to a dot type (quant_traits(weight).dot_type) on this
// CPU. Every SIMD quantizer writes the same bytes as the scalar one of quant/traits.h, for every
// input (zeros, ties in magnitude, NaN and infinities included), because the dot kernels' results
// and the GPU ops' references are defined on those bytes (tests/quant/quantize_activation_test.cpp).
// A decode step quantizes a few hundred thousand values per token on one thread while the others
// wait, so the scalar loop's ~2-3 ns per value is worth removing.
//
//   const QuantizeRowFn quantize = cpu_quantize_activation(TensorType::Q8_K);
//   quantize(x, q8, n);

#include "quant/cpu/cpu_features.h"
#include "quant/traits.h"

namespace strata {

// Best quantizer at or below max_level; the scalar one where no SIMD version is written.
QuantizeRowFn cpu_quantize_activation(TensorType dot_type, SimdLevel max_level = SimdLevel::Avx512);

// The AVX2 quantizers (quantize_activation_avx2.cpp).
void quantize_row_q8_k_avx2(const float* src, void* dst, int64_t n);

}  // namespace strata
