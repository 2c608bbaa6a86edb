#pragma once
// Declarations of the avx2 multi-row dot kernels (DotRowsFn and DotTileFn in quant/cpu/dot_rows.h). Call
// them only through cpu_dot_rows_kernel(), which checks that the CPU supports avx2.

#include <cstdint>

namespace strata {

void dot_rows_q4_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);
void dot_rows_q5_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);
void dot_rows_q6_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);

void dot_tile_q4_k_q8_k_avx2(const void* weights, uint64_t stride, const void* const* activations, int64_t tokens,
                             int64_t n, int64_t rows, float* out, int64_t out_stride);
void dot_tile_q5_k_q8_k_avx2(const void* weights, uint64_t stride, const void* const* activations, int64_t tokens,
                             int64_t n, int64_t rows, float* out, int64_t out_stride);
void dot_tile_q6_k_q8_k_avx2(const void* weights, uint64_t stride, const void* const* activations, int64_t tokens,
                             int64_t n, int64_t rows, float* out, int64_t out_stride);
void dot_rows_q2_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);
void dot_tile_q2_k_q8_k_avx2(const void* weights, uint64_t stride, const void* const* activations, int64_t tokens,
                             int64_t n, int64_t rows, float* out, int64_t out_stride);
void dot_rows_q3_k_q8_k_avx2(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows,
                             float* out);
void dot_tile_q3_k_q8_k_avx2(const void* weights, uint64_t stride, const void* const* activations, int64_t tokens,
                             int64_t n, int64_t rows, float* out, int64_t out_stride);

}  // namespace strata
