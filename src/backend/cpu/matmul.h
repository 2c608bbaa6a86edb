#pragma once
// Quantized matrix times activations on the CPU: y[t][o] = Σ_i W[o][i] · x[t][i].
// The activations are converted once to the weight type's dot type (Q8_0, Q8_K, F16, ...) and
// every output row is one call of the fastest dot kernel for this CPU (quant/cpu/dot_kernels.h;
// for row blocks of the types with one, a multi-row kernel of the same bits, quant/cpu/dot_rows.h),
// rows spread over the thread pool.
//
//   cpu_matmul(wq, 0, x, n_tokens, q, ctx);           // wq: [n_in, n_out] in GGUF order
//   cpu_matmul(experts_up, e, xe, n_e, ye, ctx);       // matrix e of a stacked expert tensor

#include <cstdint>
#include <span>

#include "backend/cpu/cpu_context.h"
#include "backend/weight.h"

namespace strata {

// x: n_tokens rows of w.ne[0] floats; y: n_tokens rows of w.ne[1] floats.
void cpu_matmul(const Weight& w, int64_t matrix_index, const float* x, int64_t n_tokens, float* y, CpuContext& ctx);

// Several independent products in one pass over the thread pool: the row blocks of all jobs are
// shared out together, so small products (q/k/v, the gate and up matrices of each selected
// expert) cost one synchronization instead of one each — at batch 1 that synchronization, not
// the arithmetic, would dominate. Jobs with the same input and dot type quantize it once.
//
// A job may read its tokens as a selection of x's rows (x_rows, x_count): the routed experts of
// a MoE layer each take some of the batch's tokens, and naming the rows instead of copying them
// out lets every expert share one quantized copy of the batch (at batch 1, one quantization of
// the token instead of one per selected expert).
struct MatmulJob {
    const Weight* w;
    int64_t matrix_index;
    const float* x;      // x_rows null: n_tokens rows; else x_count rows
    int64_t n_tokens;
    float* y;            // n_tokens rows
    const int32_t* x_rows = nullptr;  // token t reads row x_rows[t] of x (each in [0, x_count))
    int64_t x_count = 0;
};
void cpu_matmul_grouped(std::span<const MatmulJob> jobs, CpuContext& ctx);

// Rows of an embedding table (token ids) dequantized to floats: out[t] = W[ids[t]].
void cpu_get_rows(const Weight& w, const int32_t* ids, int64_t n, float* out);

}  // namespace strata
