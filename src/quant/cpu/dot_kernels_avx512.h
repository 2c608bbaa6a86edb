#pragma once
// Declarations of the avx512 dot kernels (same signature as DotFn in quant/traits.h). Call them
// only through cpu_dot_kernel(), which checks that the CPU supports avx512.

#include <cstdint>

namespace strata {

// K-quant, legacy and MXFP4 kernels

// IQ kernels

}  // namespace strata
