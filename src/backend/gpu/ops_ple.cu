// The PLE block's ops of gpu_ops_qwen4exp.h; CPU reference model/blocks/ple_block.cpp (the gate
// loop of ple_block and dilated_causal_conv), whose arithmetic each kernel repeats in the same order.
#include <algorithm>

#include "backend/gpu/gpu_ops_qwen4exp.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kRowBlock = 256;
constexpr int kConvBlock = 128;      // channels per block
constexpr int64_t kConvChunk = 64;   // tokens per block

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// One block per (token, stream).
__global__ void ple_gate_kernel(const float* key, const float* query, const float* value, int64_t hc, int64_t n,
                                float* u) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    const int64_t row = blockIdx.x, t = row / hc;
    const float* k = key + row * n;
    const float* q = query + row * n;
    float dot = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) dot += k[i] * q[i];
    float g = block_sum(dot, shared) * (1.0f / sqrtf(static_cast<float>(n)));
    g = (g > 0.0f ? 1.0f : g < 0.0f ? -1.0f : 0.0f) * sqrtf(fmaxf(fabsf(g), 1e-6f));
    const float scale = sigmoid(g);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) u[row * n + i] = scale * value[t * n + i];
}

// Window row s of [history ; x], channel c.
__device__ __forceinline__ float window_at(const float* x, const float* history, int64_t past, int64_t channels,
                                          int64_t s, int64_t c) {
    return s < past ? history[s * channels + c] : x[(s - past) * channels + c];
}

// Block (x: channels, y: a chunk of tokens): R += u + silu(Σ_k w[c][k] · window[t + k·dilation][c]).
__global__ void ple_conv_add_kernel(const float* x, const float* u, int64_t n_tokens, int64_t channels,
                                    const float* weight, int64_t kernel, int64_t dilation, const float* history,
                                    float* R) {
    vendor::wait_for_previous_kernel();
    const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (c >= channels) return;
    const int64_t past = (kernel - 1) * dilation;
    const int64_t t0 = blockIdx.y * kConvChunk, t1 = min(n_tokens, t0 + kConvChunk);
    for (int64_t t = t0; t < t1; ++t) {
        float sum = 0.0f;
        for (int64_t k = 0; k < kernel; ++k) sum += weight[c * kernel + k] * window_at(x, history, past, channels, t + k * dilation, c);
        R[t * channels + c] += u[t * channels + c] + sum * sigmoid(sum);
    }
}

// History row j <- window row n_tokens + j; ascending, each row reads one at or after it, so a
// short batch shifts the older rows up in place.
__global__ void ple_history_kernel(const float* x, int64_t n_tokens, int64_t channels, int64_t past, float* history) {
    vendor::wait_for_previous_kernel();
    const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (c >= channels) return;
    for (int64_t j = 0; j < past; ++j) history[j * channels + c] = window_at(x, history, past, channels, n_tokens + j, c);
}

}  // namespace

void gpu_ple_gate(const float* key, const float* query, const float* value, int64_t n_tokens, int64_t hc, int64_t n,
                  float* u, GpuContext& ctx) {
    STRATA_CHECK(hc > 0 && n > 0, "gpu_ple_gate: empty rows");
    if (n_tokens == 0) return;
    launch_chained(ctx, ple_gate_kernel, static_cast<unsigned>(n_tokens * hc), kRowBlock, 0, key, query, value, hc, n, u);
}

void gpu_ple_conv_add(const float* x, const float* u, int64_t n_tokens, int64_t channels, const float* weight,
                      int64_t kernel, int64_t dilation, float* history, float* R, GpuContext& ctx) {
    STRATA_CHECK(kernel >= 1 && dilation >= 1, "gpu_ple_conv_add: kernel and dilation must be positive");
    if (n_tokens == 0 || channels == 0) return;
    const dim3 grid(grid_for(channels, kConvBlock), grid_for(n_tokens, static_cast<int>(kConvChunk)));
    launch_chained(ctx, ple_conv_add_kernel, grid, kConvBlock, 0, x, u, n_tokens, channels, weight, kernel, dilation,
                   static_cast<const float*>(history), R);
    const int64_t past = (kernel - 1) * dilation;
    if (past > 0) {
        launch_chained(ctx, ple_history_kernel, grid_for(channels, kConvBlock), kConvBlock, 0, x, n_tokens, channels,
                       past, history);
    }
}

}  // namespace strata::gpu
