// The per-expert biases and the activation of experts that have them (gpt-oss), on rows laid out
// by (token, slot) pair as the grouped expert matmuls write them (gpu_ops.h). CPU reference:
// apply_routed_experts in model/blocks/moe_routing.cpp (bias adds, clamped_swiglu).
#include <algorithm>
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kBlock = 256;

// gpt-oss's constants (GptOssExperts): the gate clamped from above, up both ways, and the +1 on up.
constexpr float kGptOssAlpha = 1.702f, kGptOssLimit = 7.0f;

// One block row per row: blockIdx.y is the row, x strides over it; the row's pair is itself, or
// row_pairs[row] (rows in an expert-sorted order).
__global__ void bias_activation_kernel(float* gate, const float* up, const int32_t* ids, const int32_t* row_pairs, int64_t n,
                                       const float* gate_bias, const float* up_bias, GpuExpertActivation act) {
    vendor::wait_for_previous_kernel();
    const int64_t r = blockIdx.y;
    const int64_t expert = ids[row_pairs ? row_pairs[r] : r];
    float* g_row = gate + r * n;
    const float* u_row = up + r * n;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        float g = g_row[i], u = u_row[i];
        if (gate_bias) g += gate_bias[expert * n + i];
        if (up_bias) u += up_bias[expert * n + i];
        if (act == GpuExpertActivation::SwiGlu) {
            g_row[i] = g / (1.0f + expf(-g)) * u;
        } else {
            g = fminf(g, kGptOssLimit);
            u = fminf(fmaxf(u, -kGptOssLimit), kGptOssLimit);
            g_row[i] = g / (1.0f + expf(-kGptOssAlpha * g)) * (u + 1.0f);
        }
    }
}

__global__ void add_expert_bias_kernel(float* out, const int32_t* ids, int64_t n, const float* bias) {
    vendor::wait_for_previous_kernel();
    const int64_t p = blockIdx.y;
    const float* b = bias + static_cast<int64_t>(ids[p]) * n;
    float* row = out + p * n;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        row[i] += b[i];
    }
}

dim3 pair_grid(int64_t n_pairs, int64_t n) {
    STRATA_CHECK(n_pairs <= 65535, "expert bias ops: more pairs than one launch takes (split the batch)");
    return dim3(std::min<unsigned>(grid_for(n, kBlock), 64u), static_cast<unsigned>(n_pairs));
}

}  // namespace

void gpu_moe_bias_activation(float* gate, const float* up, const int32_t* ids, int64_t n_pairs, int64_t n,
                             const float* gate_bias, const float* up_bias, GpuExpertActivation act, GpuContext& ctx,
                             const int32_t* row_pairs) {
    if (n_pairs == 0 || n == 0) return;
    launch_chained(ctx, bias_activation_kernel, pair_grid(n_pairs, n), kBlock, 0, gate, up, ids, row_pairs, n, gate_bias,
                   up_bias, act);
}

void gpu_moe_add_expert_bias(float* out, const int32_t* ids, int64_t n_pairs, int64_t n, const float* bias,
                             GpuContext& ctx) {
    if (n_pairs == 0 || n == 0 || !bias) return;
    launch_chained(ctx, add_expert_bias_kernel, pair_grid(n_pairs, n), kBlock, 0, out, ids, n, bias);
}

}  // namespace strata::gpu
