#pragma once
// The CPU attention's arithmetic on the rows of an f16 KV cache (kv/kv_cache.h), widening the
// halves to f32 as it reads them: the bytes moved are half an f32 cache's, the floats computed
// with are the same. Both kernels do, per row, exactly the float operations the f32 path of
// backend/cpu/attention.cpp does on an f32 row (eight running lanes for a dot product, summed
// pairwise; no fused multiply-add), and widening is exact, so an f16 cache gives the attention an
// f32 cache holding the same rounded values gives, whichever kernel runs.
//
//   const F16RowKernels& k = f16_row_kernels();                  // F16C when the CPU has it
//   k.dots(q, rows, row_stride, n_rows, head_dim, scale, scores);  // scores[i] = (q · row i) · scale
//   k.accumulate(scores, inv, rows, row_stride, n_rows, head_dim, out);  // out += (scores[i] · inv) · row i

#include <cstdint>

namespace strata {

// rows: the first of n_rows halves rows of n values, row_stride halves apart.
using F16DotsFn = void (*)(const float* q, const uint16_t* rows, int64_t row_stride, int64_t n_rows, int64_t n,
                          float scale, float* out);
using F16AccumulateFn = void (*)(const float* weights, float inv, const uint16_t* rows, int64_t row_stride,
                                int64_t n_rows, int64_t n, float* out);
struct F16RowKernels {
    F16DotsFn dots;
    F16AccumulateFn accumulate;
};

// The eight-lane dot product of the attention (a·b in lanes d mod 8, then summed pairwise): the
// f32 path calls it on f32 rows, the scalar f16 kernels on rows they widen element by element.
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

const F16RowKernels& f16_row_kernels_scalar();
const F16RowKernels& f16_row_kernels_avx2();  // AVX2 + F16C CPUs only
// The fastest set this CPU runs.
const F16RowKernels& f16_row_kernels();

}  // namespace strata
