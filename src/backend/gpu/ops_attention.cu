// The device KV cache and causal grouped-query attention over it (gpu_ops.h); CPU reference in
// backend/cpu/attention.cpp. One block per (query token, head): its warps take interleaved key
// positions with an online softmax each, then merge their partial sums through shared memory.
// Correct at any length; long-context decode wants split-K across blocks (not done yet).
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kAttentionBlock = 128;
constexpr int kAttentionMaxWarps = kAttentionBlock / 32;
constexpr int kStoreBlock = 256;

__device__ __forceinline__ float load_kv(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load_kv(const uint16_t* p, int64_t i) { return vendor::half_bits_to_float(p[i]); }
__device__ __forceinline__ void store_kv(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store_kv(uint16_t* p, int64_t i, float v) { p[i] = vendor::float_to_half_bits(v); }

template <typename KV>
__global__ void kv_store_kernel(const float* src, int64_t dim, int64_t pos0, KV* dst) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t t = blockIdx.y;
    if (i < dim) store_kv(dst, (pos0 + t) * dim + i, src[t * dim + i]);
}

template <typename KV>
__global__ void attention_kernel(const float* q, const KV* keys, const KV* values, int64_t pos0, GpuAttentionParams p,
                                 float* out) {
    constexpr int kPerLane = static_cast<int>(kGpuMaxHeadDim) / vendor::kWarpSize;
    __shared__ float s_max[kAttentionMaxWarps], s_sum[kAttentionMaxWarps];
    __shared__ float s_acc[kAttentionMaxWarps][kGpuMaxHeadDim];
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize, warp = static_cast<int>(threadIdx.x) / vendor::kWarpSize;
    const int n_warps = static_cast<int>(blockDim.x) / vendor::kWarpSize;
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int64_t kv_head = h / (p.n_head / p.n_head_kv);
    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const int64_t n_kv = pos0 + t + 1;  // causal: this token sees positions <= its own
    const int64_t j0 = p.sliding_window > 0 ? max(static_cast<int64_t>(0), n_kv - p.sliding_window) : 0;

    const float* qh = q + (t * p.n_head + h) * p.head_dim_k;
    float qv[kPerLane], acc[kPerLane];
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int64_t d = lane + i * vendor::kWarpSize;
        qv[i] = d < p.head_dim_k ? qh[d] : 0.0f;
        acc[i] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (int64_t j = j0 + warp; j < n_kv; j += n_warps) {
        const KV* kr = keys + j * k_stride + kv_head * p.head_dim_k;
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int64_t d = lane + i * vendor::kWarpSize;
            if (d < p.head_dim_k) s += qv[i] * load_kv(kr, d);
        }
        s = warp_sum(s) * p.scale;
        const float m_new = fmaxf(m, s);
        const float correction = expf(m - m_new), weight = expf(s - m_new);
        l = l * correction + weight;
        const KV* vr = values + j * v_stride + kv_head * p.head_dim_v;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int64_t d = lane + i * vendor::kWarpSize;
            if (d < p.head_dim_v) acc[i] = acc[i] * correction + weight * load_kv(vr, d);
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

void gpu_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const GpuAttentionParams& p, float* out, GpuContext& ctx) {
    STRATA_CHECK(p.head_dim_k <= kGpuMaxHeadDim && p.head_dim_v <= kGpuMaxHeadDim, "gpu_attention: head dim above kGpuMaxHeadDim");
    STRATA_CHECK(p.n_head_kv > 0 && p.n_head % p.n_head_kv == 0, "gpu_attention: n_head must be a multiple of n_head_kv");
    STRATA_CHECK(p.n_head_kv * p.head_dim_k == kv.k_dim() && p.n_head_kv * p.head_dim_v == kv.v_dim(),
                 "gpu_attention: head shape does not match the KV cache rows");
    STRATA_CHECK(pos0 + n_tokens <= kv.n_ctx() && n_tokens <= 65535, "gpu_attention: batch past the cache or too large");
    if (n_tokens == 0) return;
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(n_tokens));
    if (kv.type() == KvType::F16) {
        attention_kernel<<<grid, kAttentionBlock, 0, stream_of(ctx)>>>(
            q, static_cast<const uint16_t*>(kv.keys(layer)), static_cast<const uint16_t*>(kv.values(layer)), pos0, p, out);
    } else {
        attention_kernel<<<grid, kAttentionBlock, 0, stream_of(ctx)>>>(
            q, static_cast<const float*>(kv.keys(layer)), static_cast<const float*>(kv.values(layer)), pos0, p, out);
    }
    STRATA_GPU_LAUNCHED();
}

}  // namespace strata::gpu
