// A block's residual add fused with the next block's RMS norm (gpu_ops.h): gpu_add_rms_norm and
// gpu_moe_combine_rms_norm. Separately, the add writes x and the norm reads it back in a second
// launch; at decode both are launch-bound, so one pass per row halves the launches between the
// blocks. One block per row, of 1024 threads: at decode there is one row, and a block of 256
// spends most of its time walking the row (the MoE combine reads k rows per element).
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/norm_row.cuh"

namespace strata::gpu {

namespace {

constexpr int kRowBlock = 1024;  // at most kMaxBlock: block_sum's shared array holds its warps

__global__ void add_rms_norm_kernel(float* x, const float* y, const float* weight, int64_t n, float eps, float* out,
                                    GpuQ8Rows q8) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    float* xr = x + blockIdx.x * n;
    const float* yr = y + blockIdx.x * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = xr[i] + yr[i];
        xr[i] = v;
        sum += v * v;
    }
    norm_row(xr, weight, n, eps, sum, shared, out + blockIdx.x * n, q8);
}

__global__ void moe_combine_rms_norm_kernel(const float* expert_out, const float* weights, int64_t k, int64_t n,
                                            float* x, const float* weight, float eps, float* out, GpuQ8Rows q8,
                                            const float* addend) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    const int64_t t = blockIdx.x;
    float* xr = x + t * n;
    float sum = 0.0f;
    for (int64_t d = threadIdx.x; d < n; d += blockDim.x) {
        float s = 0.0f;  // the same order as combine_kernel (ops_moe.cu)
        for (int64_t j = 0; j < k; ++j) s += weights[t * k + j] * expert_out[(t * k + j) * n + d];
        const float v = (addend ? xr[d] + addend[t * n + d] : xr[d]) + s;
        xr[d] = v;
        sum += v * v;
    }
    norm_row(xr, weight, n, eps, sum, shared, out + t * n, q8);
}


}  // namespace

void gpu_add_rms_norm(float* x, const float* y, const float* weight, int64_t n_rows, int64_t n, float eps, float* out,
                      GpuContext& ctx, const GpuQ8Rows* q8) {
    if (n_rows == 0) return;
    launch_chained(ctx, add_rms_norm_kernel, static_cast<unsigned>(n_rows), kRowBlock, 0, x, y, weight, n, eps, out,
                   q8_target(q8, n));
}

void gpu_moe_combine_rms_norm(const float* expert_out, const float* weights, int64_t n_tokens, int64_t k, int64_t n,
                              float* x, const float* weight, float eps, float* out, GpuContext& ctx,
                              const GpuQ8Rows* q8, const float* addend) {
    if (n_tokens == 0) return;
    launch_chained(ctx, moe_combine_rms_norm_kernel, static_cast<unsigned>(n_tokens), kRowBlock, 0, expert_out, weights,
                   k, n, x, weight, eps, out, q8_target(q8, n), addend);
}

}  // namespace strata::gpu
