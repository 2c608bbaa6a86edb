#pragma once
// The second half of an RMS norm, shared by gpu_rms_norm (ops_elementwise.cu) and the fused norms
// (ops_fused_norm.cu): one block per row, `sum` the thread's part of Σx²; writes the normed row
// and, when q8 is set, the same row quantized for the int8 matrix-vector kernel.
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/q8_quantize.cuh"

namespace strata::gpu {

// With q8 set, the normed row is also quantized for the int8 matrix-vector kernel (its 32-lane
// groups walk whole 32-value blocks: n is a multiple of 32 there, and the stride of 1024 too).
__device__ __forceinline__ void norm_row(const float* x, const float* weight, int64_t n, float eps, float sum,
                                         float* shared, float* out, GpuQ8Rows q8) {
    const float scale = rsqrtf(block_sum(sum, shared) / static_cast<float>(n) + eps);
    // Each thread reads back only the elements it wrote itself: no barrier needed before this.
    if (!q8.q) {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = x[i] * scale * (weight ? weight[i] : 1.0f);
        return;
    }
    int8_t* q_row = const_cast<int8_t*>(q8.q) + blockIdx.x * n;
    float2* ds_row = reinterpret_cast<float2*>(const_cast<float*>(q8.ds)) + blockIdx.x * (n / 32);
    for (int64_t base = 0; base < n; base += blockDim.x) {  // every lane runs every round: shuffles
        const int64_t i = base + threadIdx.x;
        const bool in = i < n;
        const float v = in ? x[i] * scale * (weight ? weight[i] : 1.0f) : 0.0f;
        if (in) out[i] = v;
        quantize_q8_value(v, in, q_row, ds_row, i);
    }
}

// A row held in registers: thread value r (r < kPer) is the row's element held_index(r), so one
// block of blockDim threads holds up to kPer·blockDim values. The fused norms (ops_fused_norm.cu)
// read every input of their row, the norm weight included, before the first reduction: each
// thread then waits for memory once, where a loop over the row waits once per round and input.
__device__ __forceinline__ int64_t held_index(int r) { return threadIdx.x + static_cast<int64_t>(r) * blockDim.x; }

// The second half of an RMS norm of a held row: v the values (x), w the norm weight's (1 where
// there is none), `sum` the thread's part of Σx²; the arithmetic of norm_row.
template <int kPer>
__device__ __forceinline__ void norm_held_row(const float (&v)[kPer], const float (&w)[kPer], int64_t n, float eps,
                                              float sum, float* shared, float* out, GpuQ8Rows q8) {
    const float scale = rsqrtf(block_sum(sum, shared) / static_cast<float>(n) + eps);
    int8_t* q_row = q8.q ? const_cast<int8_t*>(q8.q) + blockIdx.x * n : nullptr;
    float2* ds_row = q8.q ? reinterpret_cast<float2*>(const_cast<float*>(q8.ds)) + blockIdx.x * (n / 32) : nullptr;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
        if (static_cast<int64_t>(r) * blockDim.x >= n) break;  // the same for the whole block
        const int64_t i = held_index(r);
        // With q8 set n is a multiple of 32 (q8_target), so a 32-lane group is all in or all out.
        const bool in = i < n;
        const float y = in ? v[r] * scale * w[r] : 0.0f;
        if (in) out[i] = y;
        if (q_row) quantize_q8_value(y, in, q_row, ds_row, i);
    }
}

// Values per thread for a row of n values over `threads` threads: 1, 2, 4 or 8, or 0 when the row
// is too long to hold (the kernels then walk it).
inline int held_values_per_thread(int64_t n, int threads) {
    const int64_t per = (n + threads - 1) / threads;
    return per <= 1 ? 1 : per <= 2 ? 2 : per <= 4 ? 4 : per <= 8 ? 8 : 0;
}

// q8 as a kernel argument: empty when null, checked against the row width.
inline GpuQ8Rows q8_target(const GpuQ8Rows* q8, int64_t n) {
    if (!q8) return GpuQ8Rows{};
    STRATA_CHECK(q8->n_in == n && n % 32 == 0, "quantized norm output of another width than the rows");
    return *q8;
}

}  // namespace strata::gpu
