// The hyper-connection ops of gpu_ops_qwen4exp.h; CPU reference model/blocks/hyper_connection.cpp
// (and cpu_grouped_rms_norm), whose loops each kernel repeats in the same order.
#include <algorithm>

#include "backend/gpu/gpu_ops_qwen4exp.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kElemBlock = 256;
constexpr int kRowBlock = 256;

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

unsigned elementwise_grid(int64_t n, const GpuContext& ctx) {
    const int64_t cap = static_cast<int64_t>(ctx.device().multiprocessors) * 8;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(cap, (n + kElemBlock - 1) / kElemBlock)));
}

#define STRATA_GRID_STRIDE(i, count)                                                                    \
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (count);         \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void hc_broadcast_kernel(const float* x, int64_t n_tokens, int64_t hc, int64_t n, float* R) {
    vendor::wait_for_previous_kernel();
    STRATA_GRID_STRIDE(i, n_tokens * hc * n) {
        const int64_t t = i / (hc * n), d = i % n;
        R[i] = x[t * n + d];
    }
}

// One block per (row, group).
__global__ void grouped_rms_norm_kernel(const float* x, const float* weight, int64_t groups, int64_t n, float eps,
                                        float* out) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    const int64_t row = blockIdx.x, g = row % groups;
    const float* xr = x + row * n;
    const float* w = weight + g * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
    const float scale = rsqrtf(block_sum(sum, shared) / static_cast<float>(n) + eps);
    // Each thread rewrites only the elements it read: out may be x.
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) out[row * n + i] = xr[i] * scale * w[i];
}

__global__ void hc_low_activation_kernel(float* low, int64_t count, float hc) {
    vendor::wait_for_previous_kernel();
    STRATA_GRID_STRIDE(i, count) {
        const float v = low[i] / hc;
        low[i] = v * sigmoid(v);
    }
}

__global__ void hc_mix_streams_kernel(const float* mix, const float* normed, int64_t n_tokens, int64_t hc, int64_t n,
                                      float* x) {
    vendor::wait_for_previous_kernel();
    STRATA_GRID_STRIDE(i, n_tokens * n) {
        const int64_t t = i / n, d = i % n;
        const float* m = mix + t * hc * n + d;
        const float* nr = normed + t * hc * n + d;
        float sum = 0.0f;
        for (int64_t s = 0; s < hc; ++s) sum += sigmoid(m[s * n]) * nr[s * n];
        x[i] = sum / static_cast<float>(hc);
    }
}

__global__ void hc_inject_weights_kernel(float* a, int64_t count, float hc) {
    vendor::wait_for_previous_kernel();
    STRATA_GRID_STRIDE(i, count) a[i] = 2.0f * sigmoid(a[i] / hc);
}

__global__ void hc_combine_kernel(const float* y, const float* a, int64_t n_tokens, int64_t hc, int64_t n, float* R) {
    vendor::wait_for_previous_kernel();
    STRATA_GRID_STRIDE(i, n_tokens * hc * n) {
        const int64_t ts = i / n, t = ts / hc, d = i % n;
        R[i] += a[ts] * y[t * n + d];
    }
}

#undef STRATA_GRID_STRIDE

}  // namespace

void gpu_hc_broadcast(const float* x, int64_t n_tokens, int64_t hc, int64_t n, float* R, GpuContext& ctx) {
    if (n_tokens * hc * n == 0) return;
    launch_chained(ctx, hc_broadcast_kernel, elementwise_grid(n_tokens * hc * n, ctx), kElemBlock, 0, x, n_tokens, hc,
                   n, R);
}

void gpu_grouped_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t groups, int64_t n, float eps,
                          float* out, GpuContext& ctx) {
    STRATA_CHECK(groups > 0 && n > 0, "gpu_grouped_rms_norm: empty groups");
    if (n_rows == 0) return;
    launch_chained(ctx, grouped_rms_norm_kernel, static_cast<unsigned>(n_rows * groups), kRowBlock, 0, x, weight,
                   groups, n, eps, out);
}

void gpu_hc_low_activation(float* low, int64_t count, int64_t hc, GpuContext& ctx) {
    if (count == 0) return;
    launch_chained(ctx, hc_low_activation_kernel, elementwise_grid(count, ctx), kElemBlock, 0, low, count,
                   static_cast<float>(hc));
}

void gpu_hc_mix_streams(const float* mix, const float* normed, int64_t n_tokens, int64_t hc, int64_t n, float* x,
                        GpuContext& ctx) {
    if (n_tokens * n == 0) return;
    launch_chained(ctx, hc_mix_streams_kernel, elementwise_grid(n_tokens * n, ctx), kElemBlock, 0, mix, normed,
                   n_tokens, hc, n, x);
}

void gpu_hc_inject_weights(float* a, int64_t count, int64_t hc, GpuContext& ctx) {
    if (count == 0) return;
    launch_chained(ctx, hc_inject_weights_kernel, elementwise_grid(count, ctx), kElemBlock, 0, a, count,
                   static_cast<float>(hc));
}

void gpu_hc_combine(const float* y, const float* a, int64_t n_tokens, int64_t hc, int64_t n, float* R, GpuContext& ctx) {
    if (n_tokens * hc * n == 0) return;
    launch_chained(ctx, hc_combine_kernel, elementwise_grid(n_tokens * hc * n, ctx), kElemBlock, 0, y, a, n_tokens,
                   hc, n, R);
}

}  // namespace strata::gpu
