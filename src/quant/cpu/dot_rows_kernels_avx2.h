#pragma once
// Declarations of the avx2 multi-row dot kernels (DotRowsFn in quant/cpu/dot_rows.h). Call
// them only through cpu_dot_rows_kernel(), which checks that the CPU supports avx2.

#include <cstdint>

namespace strata {

void dot_rows_q4_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);
void dot_rows_q5_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);
void dot_rows_q6_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);

}  // namespace strata
