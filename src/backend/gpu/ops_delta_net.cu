// The gated DeltaNet, gated-attention and shared-expert-gate ops of gpu_ops_delta_net.h. CPU
// references: backend/cpu/ssm_ops.cpp and the loops of model/blocks/gated_delta_net_block.cpp,
// gated_attention_block.cpp and model/arch/qwen3next.cpp, whose formulas each kernel repeats in
// the same order (sums of squares in float here, in double there: the tests' thresholds allow it).
#include <algorithm>
#include <cmath>

#include "backend/gpu/gpu_ops_delta_net.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kElemBlock = 256;   // element-wise ops
constexpr int kConvBlock = 128;   // channels per block of the convolution
constexpr int64_t kConvChunk = 64;  // tokens per block once a prompt is split over blocks
constexpr int kRowBlock = 128;    // per-row norms: the head dimension of the real models

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

unsigned elementwise_grid(int64_t n, const GpuContext& ctx) {
    const int64_t cap = static_cast<int64_t>(ctx.device().multiprocessors) * 8;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(cap, (n + kElemBlock - 1) / kElemBlock)));
}

// ---- causal conv1d ----------------------------------------------------------------------------

// Row s of the window [history ; x] (n_hist history rows first), channel c.
__device__ __forceinline__ float conv_input(const float* x, const float* history, int64_t n_hist, int64_t n_ch,
                                            int64_t s, int64_t c) {
    return s < n_hist ? history[s * n_ch + c] : x[(s - n_hist) * n_ch + c];
}

// History row s ← window row n_tokens + s, for channel c. Rows are written in ascending order
// and each reads a row at or after it, so a short batch shifts the older rows up in place.
__device__ __forceinline__ void conv_update_history(const float* x, int64_t n_tokens, int64_t n_ch, int64_t n_hist,
                                                    float* history, int64_t c) {
    for (int64_t s = 0; s < n_hist; ++s) history[s * n_ch + c] = conv_input(x, history, n_hist, n_ch, n_tokens + s, c);
}

// One thread per channel and chunk of tokens. A thread is the only reader of its channel's history
// when the batch is one chunk (decode), and then updates it itself; otherwise the blocks of later
// chunks may still read it, and conv_history_kernel updates it after them.
__global__ void causal_conv1d_silu_kernel(const float* x, int64_t n_tokens, int64_t n_ch, const float* weight,
                                          int64_t kernel, float* history, float* out, int64_t chunk,
                                          bool update_history) {
    const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (c >= n_ch) return;
    const int64_t n_hist = kernel - 1;
    float w[kGpuMaxConvKernel];
#pragma unroll
    for (int j = 0; j < kGpuMaxConvKernel; ++j) w[j] = j < kernel ? weight[c * kernel + j] : 0.0f;
    const int64_t t0 = blockIdx.y * chunk, t1 = min(n_tokens, t0 + chunk);
    for (int64_t t = t0; t < t1; ++t) {
        float sum = 0.0f;
        // Token t sits at window row t + n_hist; tap j reads row t + j (as the CPU, in tap order).
#pragma unroll
        for (int j = 0; j < kGpuMaxConvKernel; ++j) {
            if (j < kernel) sum += w[j] * conv_input(x, history, n_hist, n_ch, t + j, c);
        }
        out[t * n_ch + c] = silu(sum);
    }
    if (update_history) conv_update_history(x, n_tokens, n_ch, n_hist, history, c);
}

__global__ void conv_history_kernel(const float* x, int64_t n_tokens, int64_t n_ch, int64_t n_hist, float* history) {
    const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (c < n_ch) conv_update_history(x, n_tokens, n_ch, n_hist, history, c);
}

// ---- q/k norm and gates -----------------------------------------------------------------------

// One block per (token, q or k head): grid.x = n_tokens · 2·n_k, heads of a token consecutive.
__global__ void delta_net_qk_norm_kernel(float* qkv, int64_t conv_ch, int64_t n_k, int64_t d_k, float eps,
                                         float q_scale) {
    __shared__ float shared[kMaxWarpsPerBlock];
    const int64_t t = blockIdx.x / (2 * n_k), h = blockIdx.x % (2 * n_k);
    float* row = qkv + t * conv_ch + h * d_k;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < d_k; i += blockDim.x) sum += row[i] * row[i];
    const float inv = 1.0f / sqrtf(block_sum(sum, shared) + eps);
    const bool is_q = h < n_k;
    // Two roundings, as the CPU: normalise, then scale the q heads.
    for (int64_t i = threadIdx.x; i < d_k; i += blockDim.x) {
        const float v = row[i] * inv;
        row[i] = is_q ? v * q_scale : v;
    }
}

// One thread per (token, v head). fused: ba rows of 2·n_v grouped per q/k head as [b × r, a × r];
// otherwise b and a rows of n_v each.
__global__ void delta_net_gates_kernel(const float* b_rows, const float* a_rows, bool fused, int64_t n_tokens,
                                       int64_t n_k, int64_t n_v, const float* a_neg, const float* dt_bias,
                                       float* gates) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n_tokens * n_v) return;
    const int64_t t = i / n_v, hv = i % n_v;
    float b_raw, a_raw;
    if (fused) {
        const int64_t r = n_v / n_k;
        const float* row = b_rows + t * 2 * n_v + (hv / r) * 2 * r;
        b_raw = row[hv % r];
        a_raw = row[r + hv % r];
    } else {
        b_raw = b_rows[i];
        a_raw = a_rows[i];
    }
    gates[2 * i] = sigmoid(b_raw);
    gates[2 * i + 1] = a_neg[hv] * softplus(a_raw + dt_bias[hv]);
}

// ---- the gated delta rule ---------------------------------------------------------------------
// The columns of a head's state S (d_k × d_v) are independent: column j needs only k, q, v[j]
// and its own Σ_i S[i][j]·k[i]. So a block takes a slice of columns of one v head, and each
// column is held in the registers of `parts` adjacent lanes, kRuleRows rows each (rows p,
// p + parts, ...), summed across those lanes by shuffles (parts ≤ 16 divides any warp). The
// state is read once, stepped through every token of the batch, and written back once; q, k, v
// and the gates are read from global memory (the same addresses for every column: L1 hits).
// At d_k = d_v = 128: parts 8, 32 columns a block, 4 blocks a head.
//
// Tokens run one after the other inside a block, so a long prompt costs a latency-bound step
// per token; a chunked (WY-form) prefill as FLA's chunk_gated_delta_rule can replace this path for
// prompts later, with this kernel kept for decode.
constexpr int kRuleBlock = 256;
constexpr int kRuleRows = 16;  // rows of S per thread: d_k ≤ 16 · parts

__device__ __forceinline__ float lane_group_sum(float v, int parts) {
    for (int offset = parts / 2; offset > 0; offset /= 2) v += lanes::shfl_xor(v, offset);
    return v;
}

__global__ void __launch_bounds__(kRuleBlock) gated_delta_rule_kernel(const float* __restrict__ qkv, int64_t n_tokens,
                                                                      int64_t conv_ch, const float* __restrict__ gates,
                                                                      GpuDeltaNetShape shape, int parts, float* state,
                                                                      float* out) {
    // Offsets inside a head in int (d_k, d_v ≤ 256): fewer registers than int64 per row of S.
    const int64_t n_k = shape.n_k, n_v = shape.n_v;
    const int d_k = static_cast<int>(shape.d_k), d_v = static_cast<int>(shape.d_v);
    const int64_t hv = blockIdx.y;
    const int64_t hk = shape.order == GpuVHeadOrder::Grouped ? hv / (n_v / n_k) : hv % n_k;
    const int p = static_cast<int>(threadIdx.x) % parts;
    const int j = static_cast<int>(blockIdx.x * (blockDim.x / parts) + threadIdx.x / parts);
    // Lanes past d_v keep running: their group partners' shuffles need them. They store nothing.
    const bool active = j < d_v;
    const int64_t key_dim = n_k * d_k, value_dim = n_v * d_v;
    float* S = state + hv * d_k * d_v;

    float s[kRuleRows];
#pragma unroll
    for (int r = 0; r < kRuleRows; ++r) {
        const int i = p + r * parts;
        s[r] = active && i < d_k ? S[i * d_v + j] : 0.0f;
    }
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* row = qkv + t * conv_ch;
        const float* q = row + hk * d_k;
        const float* k = row + key_dim + hk * d_k;
        const float beta = gates[(t * n_v + hv) * 2];
        const float decay = expf(gates[(t * n_v + hv) * 2 + 1]);
        // Decay the memory and read it at k: Σ_i S[i][j]·k[i].
        float read_k = 0.0f;
#pragma unroll
        for (int r = 0; r < kRuleRows; ++r) {
            const int i = p + r * parts;
            if (i < d_k) {
                s[r] *= decay;
                read_k += s[r] * k[i];
            }
        }
        read_k = lane_group_sum(read_k, parts);
        const float v = active ? row[2 * key_dim + hv * d_v + j] : 0.0f;
        const float delta = (v - read_k) * beta;
        // Write delta into the memory along k, then read the updated memory at q.
        float read_q = 0.0f;
#pragma unroll
        for (int r = 0; r < kRuleRows; ++r) {
            const int i = p + r * parts;
            if (i < d_k) {
                s[r] += k[i] * delta;
                read_q += s[r] * q[i];
            }
        }
        read_q = lane_group_sum(read_q, parts);
        if (active && p == 0) out[t * value_dim + hv * d_v + j] = read_q;
    }
#pragma unroll
    for (int r = 0; r < kRuleRows; ++r) {
        const int i = p + r * parts;
        if (active && i < d_k) S[i * d_v + j] = s[r];
    }
}

// ---- norms and element-wise -------------------------------------------------------------------

// One block per row. out may equal x: each thread rewrites only the elements it reads after the
// reduction's barriers.
__global__ void gated_rms_norm_kernel(const float* x, const float* z, const float* weight, int64_t n, float eps,
                                      float* out, bool sigmoid_gate) {
    __shared__ float shared[kMaxWarpsPerBlock];
    const float* xr = x + blockIdx.x * n;
    const float* zr = z + blockIdx.x * n;
    float* o = out + blockIdx.x * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
    const float scale = 1.0f / sqrtf(block_sum(sum, shared) / static_cast<float>(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        o[i] = xr[i] * scale * weight[i] * (sigmoid_gate ? sigmoid(zr[i]) : silu(zr[i]));
    }
}

__global__ void split_q_gate_kernel(const float* qg, int64_t total, int64_t head_dim, float* q, float* gate) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const float* head = qg + (i / head_dim) * 2 * head_dim;
        const int64_t d = i % head_dim;
        q[i] = head[d];
        gate[i] = head[head_dim + d];
    }
}

__global__ void mul_sigmoid_kernel(float* x, const float* gate, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        x[i] *= sigmoid(gate[i]);
    }
}

__global__ void add_sigmoid_scaled_kernel(float* x, const float* y, const float* logit, int64_t n_rows, int64_t n) {
    const int64_t total = n_rows * n;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        // The CPU rounds the product into its acc row before adding; an FMA here may not (1 ulp).
        x[i] += sigmoid(logit[i / n]) * y[i];
    }
}

}  // namespace

void gpu_causal_conv1d_silu(const float* x, int64_t n_tokens, int64_t n_ch, const float* weight, int64_t kernel,
                            float* history, float* out, GpuContext& ctx) {
    STRATA_CHECK(kernel >= 1 && kernel <= kGpuMaxConvKernel && n_ch > 0,
                 "gpu_causal_conv1d_silu: kernel must be 1..kGpuMaxConvKernel and the channel count positive");
    STRATA_CHECK(x + n_tokens * n_ch <= out || out + n_tokens * n_ch <= x, "gpu_causal_conv1d_silu: x and out overlap");
    if (n_tokens == 0) return;
    const int64_t n_chunks = (n_tokens + kConvChunk - 1) / kConvChunk;
    STRATA_CHECK(n_chunks <= 65535, "gpu_causal_conv1d_silu: too many tokens for one launch");
    const bool one_chunk = n_chunks == 1;
    const dim3 grid(grid_for(n_ch, kConvBlock), static_cast<unsigned>(n_chunks));
    causal_conv1d_silu_kernel<<<grid, kConvBlock, 0, stream_of(ctx)>>>(x, n_tokens, n_ch, weight, kernel, history, out,
                                                                        kConvChunk, one_chunk);
    STRATA_GPU_LAUNCHED();
    if (!one_chunk && kernel > 1) {
        conv_history_kernel<<<grid_for(n_ch, kConvBlock), kConvBlock, 0, stream_of(ctx)>>>(x, n_tokens, n_ch,
                                                                                           kernel - 1, history);
        STRATA_GPU_LAUNCHED();
    }
}

void gpu_delta_net_qk_norm(float* qkv, int64_t n_tokens, int64_t conv_ch, int64_t n_k, int64_t d_k, float eps,
                           float q_scale, GpuContext& ctx) {
    STRATA_CHECK(n_k > 0 && d_k > 0 && 2 * n_k * d_k <= conv_ch,
                 "gpu_delta_net_qk_norm: the q and k heads (2·n_k·d_k) must fit in a row of conv_ch");
    if (n_tokens == 0) return;
    delta_net_qk_norm_kernel<<<static_cast<unsigned>(n_tokens * 2 * n_k), kRowBlock, 0, stream_of(ctx)>>>(
        qkv, conv_ch, n_k, d_k, eps, q_scale);
    STRATA_GPU_LAUNCHED();
}

void gpu_delta_net_gates_fused(const float* ba, int64_t n_tokens, int64_t n_k, int64_t n_v, const float* a_neg,
                               const float* dt_bias, float* gates, GpuContext& ctx) {
    STRATA_CHECK(n_k > 0 && n_v > 0 && n_v % n_k == 0, "gpu_delta_net_gates_fused: n_v must be a multiple of n_k");
    if (n_tokens == 0) return;
    delta_net_gates_kernel<<<grid_for(n_tokens * n_v, kElemBlock), kElemBlock, 0, stream_of(ctx)>>>(
        ba, nullptr, true, n_tokens, n_k, n_v, a_neg, dt_bias, gates);
    STRATA_GPU_LAUNCHED();
}

void gpu_delta_net_gates_separate(const float* beta, const float* alpha, int64_t n_tokens, int64_t n_v,
                                  const float* a_neg, const float* dt_bias, float* gates, GpuContext& ctx) {
    STRATA_CHECK(n_v > 0, "gpu_delta_net_gates_separate: no v heads");
    if (n_tokens == 0) return;
    delta_net_gates_kernel<<<grid_for(n_tokens * n_v, kElemBlock), kElemBlock, 0, stream_of(ctx)>>>(
        beta, alpha, false, n_tokens, 1, n_v, a_neg, dt_bias, gates);
    STRATA_GPU_LAUNCHED();
}

void gpu_gated_delta_rule(const float* qkv, int64_t n_tokens, int64_t conv_ch, const float* gates,
                          const GpuDeltaNetShape& shape, float* state, float* out, GpuContext& ctx) {
    STRATA_CHECK(shape.n_k > 0 && shape.n_v > 0 && shape.n_v % shape.n_k == 0,
                 "gpu_gated_delta_rule: n_v must be a positive multiple of n_k");
    STRATA_CHECK(shape.d_k > 0 && shape.d_k <= kGpuMaxDeltaNetHeadDim && shape.d_v > 0 &&
                     shape.d_v <= kGpuMaxDeltaNetHeadDim,
                 "gpu_gated_delta_rule: d_k and d_v must be 1..kGpuMaxDeltaNetHeadDim");
    STRATA_CHECK(2 * shape.n_k * shape.d_k + shape.n_v * shape.d_v <= conv_ch,
                 "gpu_gated_delta_rule: q, k and v heads do not fit in a row of conv_ch");
    STRATA_CHECK(shape.n_v <= 65535, "gpu_gated_delta_rule: too many v heads for one launch");
    if (n_tokens == 0) return;
    int parts = 1;
    while (parts * kRuleRows < shape.d_k) parts *= 2;  // ≤ 16 at d_k ≤ 256
    const int64_t columns = kRuleBlock / parts;
    const dim3 grid(grid_for(shape.d_v, static_cast<int>(columns)), static_cast<unsigned>(shape.n_v));
    gated_delta_rule_kernel<<<grid, kRuleBlock, 0, stream_of(ctx)>>>(qkv, n_tokens, conv_ch, gates, shape, parts,
                                                                      state, out);
    STRATA_GPU_LAUNCHED();
}

void gpu_gated_rms_norm(const float* x, const float* z, const float* weight, int64_t n_rows, int64_t n, float eps,
                        float* out, GpuContext& ctx, GpuNormGate gate) {
    STRATA_CHECK(n > 0, "gpu_gated_rms_norm: empty rows");
    if (n_rows == 0) return;
    gated_rms_norm_kernel<<<static_cast<unsigned>(n_rows), kRowBlock, 0, stream_of(ctx)>>>(x, z, weight, n, eps, out,
                                                                                          gate == GpuNormGate::Sigmoid);
    STRATA_GPU_LAUNCHED();
}

void gpu_split_q_gate(const float* qg, int64_t n_tokens, int64_t n_head, int64_t head_dim, float* q, float* gate,
                      GpuContext& ctx) {
    STRATA_CHECK(head_dim > 0, "gpu_split_q_gate: head_dim must be positive");
    const int64_t total = n_tokens * n_head * head_dim;
    if (total == 0) return;
    split_q_gate_kernel<<<elementwise_grid(total, ctx), kElemBlock, 0, stream_of(ctx)>>>(qg, total, head_dim, q, gate);
    STRATA_GPU_LAUNCHED();
}

void gpu_mul_sigmoid(float* x, const float* gate, int64_t n, GpuContext& ctx) {
    if (n == 0) return;
    mul_sigmoid_kernel<<<elementwise_grid(n, ctx), kElemBlock, 0, stream_of(ctx)>>>(x, gate, n);
    STRATA_GPU_LAUNCHED();
}

void gpu_add_sigmoid_scaled(float* x, const float* y, const float* logit, int64_t n_rows, int64_t n, GpuContext& ctx) {
    if (n_rows * n == 0) return;
    add_sigmoid_scaled_kernel<<<elementwise_grid(n_rows * n, ctx), kElemBlock, 0, stream_of(ctx)>>>(x, y, logit,
                                                                                                  n_rows, n);
    STRATA_GPU_LAUNCHED();
}

}  // namespace strata::gpu
