#pragma once
// The fastest dot-product kernel for each weight type on this CPU. Each kernel computes the same
// number as the scalar reference in quant/traits.h (up to float summation order) and is tested
// against it for every level the CPU supports (tests/quant/cpu_kernels_test.cpp).
//
//   DotFn dot = cpu_dot_kernel(TensorType::Q4_K);            // best level available
//   DotFn avx2 = cpu_dot_kernel(TensorType::Q4_K, SimdLevel::Avx2);  // or a given one

#include <cstddef>

#include "quant/cpu/cpu_features.h"
#include "quant/traits.h"

namespace strata {

struct DotKernel {
    TensorType type;
    DotFn dot;
};

// Kernels of one SIMD level (defined in dot_<level>.cpp; empty tables where none are written).
const DotKernel* avx2_dot_kernels(size_t* count);
const DotKernel* avx512_dot_kernels(size_t* count);

// The best kernel at or below `max_level` (clamped to what the CPU supports); the scalar
// reference when no SIMD kernel exists for the type. Null only for types without a dot.
DotFn cpu_dot_kernel(TensorType type, SimdLevel max_level = SimdLevel::Avx512);
// The kernel of exactly `level`, or null when none is written for the type (for tests/benches).
DotFn cpu_dot_kernel_exact(TensorType type, SimdLevel level);

}  // namespace strata
