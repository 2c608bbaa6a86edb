// The device KV cache and causal grouped-query attention over it (gpu_ops.h); CPU reference in
// backend/cpu/attention.cpp. One block per (query token, head): its warps take interleaved groups
// of key positions with an online softmax each, then merge their partial sums through shared
// memory. Correct at any length; long-context decode wants split-K across blocks (not done yet:
// one block per head reads the whole cache).
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/kv_access.cuh"

namespace strata::gpu {

namespace {

// Threads per block: a one-token step has few blocks (one per head), so each gets more warps to
// keep more keys in flight; prompt batches have a block per (token, head) already.
constexpr int kAttentionBlockDecode = 512;
constexpr int kAttentionBlockBatch = 256;
constexpr int kAttentionMaxWarps = kAttentionBlockDecode / 32;
// Keys a warp scores at once. A warp working through keys one by one waits for each key row and
// then its value row (two memory round trips per key); with a group, the loads of all its keys are
// issued before the first is used, and the online softmax rescales once per group.
constexpr int kKeyGroup = 4;
constexpr int kStoreBlock = 256;

template <typename KV>
__global__ void kv_store_kernel(const float* src, int64_t dim, int64_t pos0, KV* dst) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t t = blockIdx.y;
    if (i < dim) store_kv(dst, (pos0 + t) * dim + i, src[t * dim + i]);
}

// Token t sits at positions[t] when `positions` is set (read here, so a captured decode step
// replays at any depth), else at pos0 + t. Warp w takes key groups w, w + n_warps, ...
template <typename KV>
__global__ void attention_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions, int64_t pos0,
                                 GpuAttentionParams p, float* out) {
    constexpr int kPerLane = static_cast<int>(kGpuMaxHeadDim) / vendor::kWarpSize;
    constexpr int G = kKeyGroup;
    __shared__ float s_max[kAttentionMaxWarps], s_sum[kAttentionMaxWarps];
    __shared__ float s_acc[kAttentionMaxWarps][kGpuMaxHeadDim];
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize, warp = static_cast<int>(threadIdx.x) / vendor::kWarpSize;
    const int n_warps = static_cast<int>(blockDim.x) / vendor::kWarpSize;
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int64_t kv_head = h / (p.n_head / p.n_head_kv);
    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const int64_t n_kv = (positions ? static_cast<int64_t>(positions[t]) : pos0 + t) + 1;  // causal: up to its own
    const int64_t j0 = p.sliding_window > 0 ? max(static_cast<int64_t>(0), n_kv - p.sliding_window) : 0;

    const float* qh = q + (t * p.n_head + h) * p.head_dim_k;
    float qv[kPerLane], acc[kPerLane];
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int64_t d = lane + i * vendor::kWarpSize;
        qv[i] = d < p.head_dim_k ? qh[d] : 0.0f;
        acc[i] = 0.0f;
    }
    const KV* k_base = keys + kv_head * p.head_dim_k;
    const KV* v_base = values + kv_head * p.head_dim_v;
    float m = -INFINITY, l = 0.0f;
    for (int64_t base = j0 + static_cast<int64_t>(warp) * G; base < n_kv; base += static_cast<int64_t>(n_warps) * G) {
        float s[G];
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int64_t j = base + g;
            float dot = 0.0f;
#pragma unroll
            for (int i = 0; i < kPerLane; ++i) {
                const int64_t d = lane + i * vendor::kWarpSize;
                if (j < n_kv && d < p.head_dim_k) dot += qv[i] * load_kv(k_base + j * k_stride, d);
            }
            s[g] = dot;
        }
        float m_new = m;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            s[g] = base + g < n_kv ? warp_sum(s[g]) * p.scale : -INFINITY;
            m_new = fmaxf(m_new, s[g]);
        }
        // base < n_kv, so s[0] is finite and so is m_new: keys past the end weigh exp(-inf) = 0.
        const float correction = expf(m - m_new);
        float weight[G];
        l *= correction;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            weight[g] = expf(s[g] - m_new);
            l += weight[g];
        }
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int64_t d = lane + i * vendor::kWarpSize;
            if (d >= p.head_dim_v) continue;
            float a = acc[i] * correction;
#pragma unroll
            for (int g = 0; g < G; ++g) {
                if (base + g < n_kv) a += weight[g] * load_kv(v_base + (base + g) * v_stride, d);
            }
            acc[i] = a;
        }
        m = m_new;
    }

    // Merge the warps' partial softmaxes; a warp that saw no key has m = -inf and adds nothing.
    if (lane == 0) s_max[warp] = m, s_sum[warp] = l;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int64_t d = lane + i * vendor::kWarpSize;
        if (d < p.head_dim_v) s_acc[warp][d] = acc[i];
    }
    __syncthreads();
    // A sink joins the normalization as one more logit and adds no value.
    const float sink = p.sinks ? p.sinks[h] : -INFINITY;
    float total_max = sink;
    for (int w = 0; w < n_warps; ++w) total_max = fmaxf(total_max, s_max[w]);
    float total_sum = p.sinks ? expf(sink - total_max) : 0.0f;
    for (int w = 0; w < n_warps; ++w) total_sum += s_sum[w] * expf(s_max[w] - total_max);
    const float inv = 1.0f / total_sum;
    float* o = out + (t * p.n_head + h) * p.head_dim_v;
    for (int64_t d = threadIdx.x; d < p.head_dim_v; d += blockDim.x) {
        float v = 0.0f;
        for (int w = 0; w < n_warps; ++w) v += s_acc[w][d] * expf(s_max[w] - total_max);
        o[d] = v * inv;
    }
}

}  // namespace

GpuKvCache::GpuKvCache(DevicePool& pool, int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvType type,
                       std::string* error)
    : n_layer_(n_layer), n_ctx_(n_ctx), k_dim_(k_dim), v_dim_(v_dim), type_(type) {
    const uint64_t elem = type == KvType::F16 ? 2 : 4;
    std::vector<Layer> layers(static_cast<size_t>(n_layer));
    for (Layer& L : layers) {
        L.k = pool.allocate(static_cast<uint64_t>(n_ctx * k_dim) * elem, error);
        if (!L.k) return;
        L.v = pool.allocate(static_cast<uint64_t>(n_ctx * v_dim) * elem, error);
        if (!L.v) return;
    }
    layers_ = std::move(layers);
}

uint64_t GpuKvCache::bytes() const {
    uint64_t total = 0;
    for (const Layer& L : layers_) total += L.k.bytes() + L.v.bytes();
    return total;
}

void gpu_kv_store(const float* k, const float* v, int64_t n_tokens, int64_t pos0, GpuKvCache& kv, int64_t layer,
                  GpuContext& ctx) {
    STRATA_CHECK(pos0 + n_tokens <= kv.n_ctx(), "gpu_kv_store: batch runs past the KV cache");
    if (n_tokens == 0) return;
    const dim3 grid_k(grid_for(kv.k_dim(), kStoreBlock), static_cast<unsigned>(n_tokens));
    const dim3 grid_v(grid_for(kv.v_dim(), kStoreBlock), static_cast<unsigned>(n_tokens));
    if (kv.type() == KvType::F16) {
        kv_store_kernel<<<grid_k, kStoreBlock, 0, stream_of(ctx)>>>(k, kv.k_dim(), pos0, static_cast<uint16_t*>(kv.keys(layer)));
        kv_store_kernel<<<grid_v, kStoreBlock, 0, stream_of(ctx)>>>(v, kv.v_dim(), pos0, static_cast<uint16_t*>(kv.values(layer)));
    } else {
        kv_store_kernel<<<grid_k, kStoreBlock, 0, stream_of(ctx)>>>(k, kv.k_dim(), pos0, static_cast<float*>(kv.keys(layer)));
        kv_store_kernel<<<grid_v, kStoreBlock, 0, stream_of(ctx)>>>(v, kv.v_dim(), pos0, static_cast<float*>(kv.values(layer)));
    }
    STRATA_GPU_LAUNCHED();
}

namespace {

void launch_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                      int64_t pos0, const GpuAttentionParams& p, float* out, GpuContext& ctx) {
    STRATA_CHECK(p.head_dim_k <= kGpuMaxHeadDim && p.head_dim_v <= kGpuMaxHeadDim, "gpu_attention: head dim above kGpuMaxHeadDim");
    STRATA_CHECK(p.n_head_kv > 0 && p.n_head % p.n_head_kv == 0, "gpu_attention: n_head must be a multiple of n_head_kv");
    STRATA_CHECK(p.n_head_kv * p.head_dim_k == kv.k_dim() && p.n_head_kv * p.head_dim_v == kv.v_dim(),
                 "gpu_attention: head shape does not match the KV cache rows");
    STRATA_CHECK(pos0 + n_tokens <= kv.n_ctx() && n_tokens <= 65535, "gpu_attention: batch past the cache or too large");
    if (n_tokens == 0) return;
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(n_tokens));
    const int block = n_tokens == 1 ? kAttentionBlockDecode : kAttentionBlockBatch;
    if (kv.type() == KvType::F16) {
        attention_kernel<<<grid, block, 0, stream_of(ctx)>>>(
            q, static_cast<const uint16_t*>(kv.keys(layer)), static_cast<const uint16_t*>(kv.values(layer)), positions, pos0,
            p, out);
    } else {
        attention_kernel<<<grid, block, 0, stream_of(ctx)>>>(
            q, static_cast<const float*>(kv.keys(layer)), static_cast<const float*>(kv.values(layer)), positions, pos0, p,
            out);
    }
    STRATA_GPU_LAUNCHED();
}

}  // namespace

void gpu_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const GpuAttentionParams& p, float* out, GpuContext& ctx) {
    launch_attention(q, kv, layer, n_tokens, nullptr, pos0, p, out, ctx);
}

void gpu_attention_at(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                      const GpuAttentionParams& p, float* out, GpuContext& ctx) {
    // The positions live on the device; the caller has checked them against the cache on the host.
    launch_attention(q, kv, layer, n_tokens, positions, 0, p, out, ctx);
}

}  // namespace strata::gpu
