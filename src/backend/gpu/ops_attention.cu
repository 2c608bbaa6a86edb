// The device KV cache and causal grouped-query attention over it (gpu_ops.h); CPU reference in
// backend/cpu/attention.cpp. This file holds the cache, its stores, the dispatch between the
// attention paths (kernels/attention_paths.cuh) and the rows path: one block per (query token,
// head), its warps taking interleaved groups of key positions with an online softmax each, then
// merging their partial sums through shared memory. The rows path is correct at any shape; split
// (few tokens, deep cache) and flash (prompt batches) take the shapes they are faster on.
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/attention_paths.cuh"
#include "backend/gpu/kernels/attention_rows.cuh"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/kv_access.cuh"

namespace strata::gpu {

namespace {

// Threads per block: a one-token step has few blocks (one per head), so each gets more warps to
// keep more keys in flight; prompt batches have a block per (token, head) already.
constexpr int kAttentionBlockDecode = 512;
constexpr int kAttentionBlockBatch = 256;
constexpr int kAttentionMaxWarps = kAttentionBlockDecode / 32;
constexpr int kStoreBlock = 256;

template <typename KV>
__global__ void kv_store_kernel(const float* src, int64_t dim, int64_t pos0, KV* dst) {
    vendor::wait_for_previous_kernel();
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t t = blockIdx.y;
    if (i < dim) store_kv(dst, (pos0 + t) * dim + i, src[t * dim + i]);
}

// Block (x: head, y: token). Token t sits at positions[t] when `positions` is set (read here, so
// a captured step replays at any depth), else at pos0 + t.
template <typename KV>
__global__ void attention_rows_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions,
                                      int64_t pos0, GpuAttentionParams p, float* out) {
    vendor::wait_for_previous_kernel();
    __shared__ RowShared<kAttentionMaxWarps> shared;
    const int warp = static_cast<int>(threadIdx.x) / vendor::kWarpSize;
    const int n_warps = static_cast<int>(blockDim.x) / vendor::kWarpSize;
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int64_t kv_head = h / (p.n_head / p.n_head_kv);
    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const KeySpan span = visible_keys(p, positions ? static_cast<int64_t>(positions[t]) : pos0 + t);
    const HeadRows<KV> rows{keys + kv_head * p.head_dim_k, values + kv_head * p.head_dim_v, k_stride, v_stride,
                            p.head_dim_k, p.head_dim_v};

    float qv[kRowPerLane], acc[kRowPerLane];
    load_query_row(q + (t * p.n_head + h) * p.head_dim_k, p.head_dim_k, p.scale, qv);
#pragma unroll
    for (int i = 0; i < kRowPerLane; ++i) acc[i] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    warp_attend(qv, rows, span.begin, span.end, warp, n_warps, m, l, acc);

    publish_warp(shared, warp, m, l, acc, p.head_dim_v);
    __syncthreads();
    // A sink joins the normalization as one more logit and adds no value.
    const RowTotals totals = row_totals(shared, n_warps, p.sinks ? p.sinks[h] : -INFINITY);
    const float inv = 1.0f / totals.sum;
    float* o = out + (t * p.n_head + h) * p.head_dim_v;
    for (int64_t d = threadIdx.x; d < p.head_dim_v; d += blockDim.x) o[d] = row_value(shared, n_warps, totals, d) * inv;
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
        launch_chained(ctx, kv_store_kernel<uint16_t>, grid_k, kStoreBlock, 0, k, kv.k_dim(), pos0,
                       static_cast<uint16_t*>(kv.keys(layer)));
        launch_chained(ctx, kv_store_kernel<uint16_t>, grid_v, kStoreBlock, 0, v, kv.v_dim(), pos0,
                       static_cast<uint16_t*>(kv.values(layer)));
    } else {
        launch_chained(ctx, kv_store_kernel<float>, grid_k, kStoreBlock, 0, k, kv.k_dim(), pos0,
                       static_cast<float*>(kv.keys(layer)));
        launch_chained(ctx, kv_store_kernel<float>, grid_v, kStoreBlock, 0, v, kv.v_dim(), pos0,
                       static_cast<float*>(kv.values(layer)));
    }
}

namespace {

void launch_attention_rows(const AttentionCall& call, GpuContext& ctx) {
    const GpuAttentionParams& p = call.p;
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(call.n_tokens));
    const int block = call.n_tokens == 1 ? kAttentionBlockDecode : kAttentionBlockBatch;
    if (call.kv->type() == KvType::F16) {
        launch_chained(ctx, attention_rows_kernel<uint16_t>, grid, block, 0, call.q,
                       static_cast<const uint16_t*>(call.kv->keys(call.layer)),
                       static_cast<const uint16_t*>(call.kv->values(call.layer)), call.positions, call.pos0, p, call.out);
    } else {
        launch_chained(ctx, attention_rows_kernel<float>, grid, block, 0, call.q,
                       static_cast<const float*>(call.kv->keys(call.layer)),
                       static_cast<const float*>(call.kv->values(call.layer)), call.positions, call.pos0, p, call.out);
    }
}

// Picks the path by what the host knows for every replay of a captured step: the token count,
// the shape and the cache capacity (or pos0), never the device-side depth.
// Returns whether the path also wrote call.q8_out (launch_attention_split).
bool launch_attention(const AttentionCall& call, GpuContext& ctx) {
    const GpuAttentionParams& p = call.p;
    STRATA_CHECK(p.head_dim_k <= kGpuMaxHeadDim && p.head_dim_v <= kGpuMaxHeadDim, "gpu_attention: head dim above kGpuMaxHeadDim");
    STRATA_CHECK(p.n_head_kv > 0 && p.n_head % p.n_head_kv == 0, "gpu_attention: n_head must be a multiple of n_head_kv");
    STRATA_CHECK(p.n_head_kv * p.head_dim_k == call.kv->k_dim() && p.n_head_kv * p.head_dim_v == call.kv->v_dim(),
                 "gpu_attention: head shape does not match the KV cache rows");
    STRATA_CHECK(call.pos0 + call.n_tokens <= call.kv->n_ctx() && call.n_tokens <= 65535,
                 "gpu_attention: batch past the cache or too large");
    if (call.n_tokens == 0) return false;
    if (call.n_tokens >= kAttentionFlashMinTokens && launch_attention_flash(call, ctx)) return false;
    if (const int n_split = attention_split_count(call, ctx); n_split > 1) return launch_attention_split(call, n_split, ctx);
    launch_attention_rows(call, ctx);
    return false;
}

}  // namespace

void gpu_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const GpuAttentionParams& p, float* out, GpuContext& ctx) {
    launch_attention(AttentionCall{q, &kv, layer, n_tokens, nullptr, pos0, p, out, GpuQ8Rows{}}, ctx);
}

bool gpu_attention_at(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                      const GpuAttentionParams& p, float* out, GpuContext& ctx, const GpuQ8Rows* q8_out) {
    // The positions live on the device; the caller has checked them against the cache on the host.
    return launch_attention(AttentionCall{q, &kv, layer, n_tokens, positions, 0, p, out, q8_out ? *q8_out : GpuQ8Rows{}},
                            ctx);
}

}  // namespace strata::gpu
