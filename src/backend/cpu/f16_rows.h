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

#include "backend/cpu/f32_rows.h"  // dot_eight_lanes: the arithmetic both follow

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

const F16RowKernels& f16_row_kernels_scalar();
const F16RowKernels& f16_row_kernels_avx2();  // AVX2 + F16C CPUs only
// The fastest set this CPU runs.
const F16RowKernels& f16_row_kernels();

}  // namespace strata
