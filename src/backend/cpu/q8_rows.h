#pragma once
// The CPU attention's arithmetic on the rows of a q8_0 KV cache (kv/kv_cache.h: each head row is
// whole ggml q8_0 blocks, 32 int8 values and one f16 scale). Both kernels compute, per row, the
// reference dequantizer's values (int8 · scale, one float rounding each) and then exactly the float
// operations the f32 path of backend/cpu/attention.cpp does on an f32 row (eight running lanes for
// a dot product, summed pairwise; no fused multiply-add), so a q8_0 cache gives the attention of an
// f32 cache holding the dequantized values bit for bit, whichever kernel runs. The AVX2 one widens
// eight int8 values per instruction instead of dequantizing a whole row into a buffer first.
//
//   const Q8RowKernels& k = q8_row_kernels();                        // AVX2 when the CPU has it
//   k.dots(q, rows, row_bytes, n_rows, head_dim, scale, scores);     // scores[i] = (q · row i) · scale
//   k.accumulate(scores, inv, rows, row_bytes, n_rows, head_dim, out);  // out += (scores[i] · inv) · row i
//   k.dots_heads(q, q_stride, heads, rows, row_bytes, n_rows, head_dim, scale, scores, scores_stride);

#include <cstdint>

namespace strata {

// rows: the first of n_rows rows of n values (n a multiple of 32), row_bytes apart.
using Q8DotsFn = void (*)(const float* q, const uint8_t* rows, int64_t row_bytes, int64_t n_rows, int64_t n, float scale,
                         float* out);
using Q8AccumulateFn = void (*)(const float* weights, float inv, const uint8_t* rows, int64_t row_bytes, int64_t n_rows,
                               int64_t n, float* out);
// dots for `heads` query heads at once (q_h = q + h · q_stride): out[h · out_stride + i] =
// (q_h · row i) · scale, the bits of `dots` for each head.
using Q8DotsHeadsFn = void (*)(const float* q, int64_t q_stride, int64_t heads, const uint8_t* rows, int64_t row_bytes,
                              int64_t n_rows, int64_t n, float scale, float* out, int64_t out_stride);
struct Q8RowKernels {
    Q8DotsFn dots;
    Q8AccumulateFn accumulate;
    Q8DotsHeadsFn dots_heads;
};

const Q8RowKernels& q8_row_kernels_scalar();
const Q8RowKernels& q8_row_kernels_avx2();  // AVX2 CPUs only
// The fastest set this CPU runs.
const Q8RowKernels& q8_row_kernels();

}  // namespace strata
