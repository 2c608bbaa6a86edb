// The device KV cache and causal grouped-query attention over it (gpu_ops.h); CPU reference in
// backend/cpu/attention.cpp. This file holds the cache, its stores, the dispatch between the
// attention paths (kernels/attention_paths.cuh) and the rows path: one block per (query token,
// head), its warps taking interleaved groups of key positions with an online softmax each, then
// merging their partial sums through shared memory. The rows path is correct at any shape; split
// (few tokens, deep cache) and flash (prompt batches) take the shapes they are faster on.
#include <algorithm>
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
constexpr int64_t kQ8Block = 32, kQ8BlockBytes = 34;  // ggml's q8_0: an f16 scale, then 32 int8
constexpr int kQ8SyncBlock = 128;

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

// A q8_0 cache's layer into its f16 staging copy for the attention after it (GpuKvCache): block
// (r, m) takes row r of keys (m = 0) or values (m = 1), a group of 32 threads each 32-value block.
// Rows first .. end - 1 were just written to the copy in f16: they are quantized as
// quantize_row_q8_0 does (d = max |x| / 127 kept in f16, q = round(x / d)) into the stored row, and
// the copy takes the stored values back; rows before `first` are read from the stored rows; rows
// from `end` on are left alone (no query sees them). `first` and `end` come from the device
// positions when the step has them (a captured step); blocks walk rows gridDim.x apart.
__global__ void __launch_bounds__(kQ8SyncBlock)
    kv_q8_sync_kernel(const int32_t* positions, int64_t pos0, int64_t n_tokens, uint8_t* k_stored, uint8_t* v_stored,
                      uint16_t* k_copy, uint16_t* v_copy, int64_t k_dim, int64_t v_dim) {
    vendor::wait_for_previous_kernel();
    const int64_t first = positions ? positions[0] : pos0;
    const int64_t end = (positions ? positions[n_tokens - 1] : pos0 + n_tokens - 1) + 1;
    const bool keys = blockIdx.y == 0;
    const int64_t dim = keys ? k_dim : v_dim;
    const int lane = static_cast<int>(threadIdx.x) % 32, group = static_cast<int>(threadIdx.x) / 32;
    for (int64_t r = blockIdx.x; r < end; r += gridDim.x) {
        uint8_t* stored = (keys ? k_stored : v_stored) + r * (dim / kQ8Block * kQ8BlockBytes);
        uint16_t* copy = (keys ? k_copy : v_copy) + r * dim;
        const bool fresh = r >= first;
        for (int64_t b = group; b < dim / kQ8Block; b += kQ8SyncBlock / 32) {
            uint8_t* block = stored + b * kQ8BlockBytes;
            uint16_t* values = copy + b * kQ8Block;
            float d;
            int q;
            if (fresh) {
                const float x = vendor::half_bits_to_float(values[lane]);
                float amax = fabsf(x);
#pragma unroll
                for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, vendor::shfl_xor(amax, off));  // within 32 lanes
                const float scale = amax / 127.0f;
                const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
                q = static_cast<int>(roundf(x * inv));
                const uint16_t scale_bits = vendor::float_to_half_bits(scale);
                if (lane == 0) *reinterpret_cast<uint16_t*>(block) = scale_bits;
                reinterpret_cast<int8_t*>(block + 2)[lane] = static_cast<int8_t>(q);
                d = vendor::half_bits_to_float(scale_bits);
            } else {
                d = vendor::half_bits_to_float(*reinterpret_cast<const uint16_t*>(block));
                q = reinterpret_cast<const int8_t*>(block + 2)[lane];
            }
            values[lane] = vendor::float_to_half_bits(d * static_cast<float>(q));
        }
    }
}



}  // namespace

void gpu_kv_q8_sync(const GpuKvCache& kv, int64_t layer, const int32_t* positions, int64_t pos0, int64_t n_tokens,
                   GpuContext& ctx) {
    // A captured step reads its depth on the device: its blocks walk every row the cache could
    // hold, a fixed number of blocks whatever the depth.
    const int64_t rows = positions ? kv.n_ctx() : pos0 + n_tokens;
    const int64_t most = 8 * static_cast<int64_t>(std::max(1, ctx.device().multiprocessors));
    const dim3 grid(static_cast<unsigned>(std::min(rows, most)), 2);
    launch_chained(ctx, kv_q8_sync_kernel, grid, kQ8SyncBlock, 0, positions, pos0, n_tokens,
                   static_cast<uint8_t*>(kv.stored_keys(layer)), static_cast<uint8_t*>(kv.stored_values(layer)),
                   static_cast<uint16_t*>(kv.keys(layer)), static_cast<uint16_t*>(kv.values(layer)), kv.k_dim(),
                   kv.v_dim());
}

namespace {
uint64_t stored_row_bytes(KvCacheType type, int64_t dim) { return static_cast<uint64_t>(kv_row_bytes(type, dim)); }
}  // namespace

GpuKvCache::GpuKvCache(DevicePool& pool, int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvCacheType type,
                       std::string* error)
    : n_layer_(n_layer), n_ctx_(n_ctx), k_dim_(k_dim), v_dim_(v_dim), type_(type) {
    if (type == KvCacheType::Q8_0 && (k_dim % kQ8Block != 0 || v_dim % kQ8Block != 0)) {
        if (error) *error = "a q8_0 KV cache needs rows of whole 32-value blocks";
        return;
    }
    std::vector<Layer> layers(static_cast<size_t>(n_layer));
    for (Layer& L : layers) {
        L.k = pool.allocate(static_cast<uint64_t>(n_ctx) * stored_row_bytes(type, k_dim), error);
        if (!L.k) return;
        L.v = pool.allocate(static_cast<uint64_t>(n_ctx) * stored_row_bytes(type, v_dim), error);
        if (!L.v) return;
    }
    if (type == KvCacheType::Q8_0 && n_layer > 0) {
        staging_k_ = pool.allocate(static_cast<uint64_t>(n_ctx) * stored_row_bytes(KvCacheType::F16, k_dim), error);
        if (!staging_k_) return;
        staging_v_ = pool.allocate(static_cast<uint64_t>(n_ctx) * stored_row_bytes(KvCacheType::F16, v_dim), error);
        if (!staging_v_) return;
    }
    layers_ = std::move(layers);
}

uint64_t GpuKvCache::bytes() const {
    uint64_t total = staging_k_.bytes() + staging_v_.bytes();
    for (const Layer& L : layers_) total += L.k.bytes() + L.v.bytes();
    return total;
}

void gpu_kv_store(const float* k, const float* v, int64_t n_tokens, int64_t pos0, GpuKvCache& kv, int64_t layer,
                  GpuContext& ctx) {
    STRATA_CHECK(pos0 + n_tokens <= kv.n_ctx(), "gpu_kv_store: batch runs past the KV cache");
    if (n_tokens == 0) return;
    const dim3 grid_k(grid_for(kv.k_dim(), kStoreBlock), static_cast<unsigned>(n_tokens));
    const dim3 grid_v(grid_for(kv.v_dim(), kStoreBlock), static_cast<unsigned>(n_tokens));
    if (kv.type() == KvCacheType::F16) {
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
    // A q8_0 cache: the rows just written in f16 into the staging copy go into the stored rows now,
    // so that they are kept whatever reads the cache next.
    if (kv.stored_type() == KvCacheType::Q8_0) gpu_kv_q8_sync(kv, layer, nullptr, pos0, n_tokens, ctx);
}

namespace {

void launch_attention_rows(const AttentionCall& call, GpuContext& ctx) {
    const GpuAttentionParams& p = call.p;
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(call.n_tokens));
    const int block = call.n_tokens == 1 ? kAttentionBlockDecode : kAttentionBlockBatch;
    if (call.kv->type() == KvCacheType::F16) {
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
    if (call.kv->stored_type() == KvCacheType::Q8_0) gpu_kv_q8_sync(*call.kv, call.layer, call.positions, call.pos0, call.n_tokens, ctx);
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
