#pragma once
// Which SIMD level this CPU runs. Kernels for a level live in files named *_avx2.cpp /
// *_avx512.cpp, compiled for that instruction set only (src/CMakeLists.txt), and are called only
// when the running CPU has it — one binary serves every x86-64 machine.
//
//   if (cpu_simd_level() >= SimdLevel::Avx2) ...

#include <string_view>

namespace strata {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// Detected once. Avx2 means AVX2+FMA+F16C; Avx512 means F+BW+DQ+VL+VNNI (Ice Lake, Zen 4 and later).
SimdLevel cpu_simd_level();
std::string_view simd_level_name(SimdLevel level);

}  // namespace strata
