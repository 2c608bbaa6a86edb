#pragma once
// The CPU attention's arithmetic on the rows of an f32 KV cache (backend/cpu/attention.cpp). Per
// row, a dot product keeps eight running lanes (d mod 8), sums them pairwise and then adds the
// tail; the value accumulation adds w · row[d] to out[d] row by row. No fused multiply-add: the
// f16 and q8_0 kernels (f16_rows.h, q8_rows.h) do the same operations on the values they widen,
// so every cache type gives the bits of this arithmetic.
//
//   const F32RowKernels& k = f32_row_kernels();                  // AVX2 when the CPU has it
//   k.dots(q, rows, row_stride, n_rows, head_dim, scale, scores);  // scores[i] = (q · row i) · scale
//   k.accumulate(scores, inv, rows, row_stride, n_rows, head_dim, out);  // out += (scores[i] · inv) · row i

#include <cstdint>

namespace strata {

// rows: the first of n_rows rows of n floats, row_stride floats apart.
using F32DotsFn = void (*)(const float* q, const float* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale,
                          float* out);
using F32AccumulateFn = void (*)(const float* weights, float inv, const float* rows, int64_t row_stride, int64_t n_rows,
                                int64_t n, float* out);
struct F32RowKernels {
    F32DotsFn dots;
    F32AccumulateFn accumulate;
};

// The eight-lane dot product of the attention (a·b in lanes d mod 8, then summed pairwise).
inline float dot_eight_lanes(const float* a, const float* b, int64_t n) {
    constexpr int kLanes = 8;
    float lane[kLanes] = {};
    int64_t d = 0;
    for (; d + kLanes <= n; d += kLanes) {
        for (int l = 0; l < kLanes; ++l) lane[l] += a[d + l] * b[d + l];
    }
    float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    for (; d < n; ++d) s += a[d] * b[d];
    return s;
}

const F32RowKernels& f32_row_kernels_scalar();
const F32RowKernels& f32_row_kernels_avx2();  // AVX2 CPUs only
// The fastest set this CPU runs.
const F32RowKernels& f32_row_kernels();

}  // namespace strata
