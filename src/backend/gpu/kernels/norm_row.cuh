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

// q8 as a kernel argument: empty when null, checked against the row width.
inline GpuQ8Rows q8_target(const GpuQ8Rows* q8, int64_t n) {
    if (!q8) return GpuQ8Rows{};
    STRATA_CHECK(q8->n_in == n && n % 32 == 0, "quantized norm output of another width than the rows");
    return *q8;
}

}  // namespace strata::gpu
