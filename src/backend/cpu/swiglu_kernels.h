#pragma once
// SIMD versions of cpu_swiglu (ops.h), chosen at run time from the CPU's features. They agree
// with the scalar formula g / (1 + e^−g) · up to a few ulp, not bit for bit
// (tests/backend/cpu_swiglu_test.cpp).

#include <cstdint>

namespace strata {

void swiglu_avx2(float* gate, const float* up, int64_t n);

}  // namespace strata
