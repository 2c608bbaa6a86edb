// QSA's ops of gpu_ops_qwen4exp.h: the index-key planes, their block pooling, the block scores
// and top-k selection, and the attention over the selected keys. CPU reference
// model/blocks/qsa_indexer.cpp (pooled_block_keys, the scoring loop, qsa_query_ranges) and the
// attention of backend/cpu/attention.cpp over those ranges.
#include <algorithm>

#include "backend/gpu/gpu_ops_qwen4exp.h"
#include "backend/gpu/kernels/attention_rows.cuh"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/rope.cuh"

namespace strata::gpu {

namespace {

constexpr int kStoreBlock = 128;
constexpr int kPoolBlock = 128;
constexpr int64_t kMaxIndexDim = 1024;    // pooled rows are built in shared memory
constexpr int64_t kMaxIndexQuery = 4096;  // a query's heads · dim, held in shared memory to score
constexpr int kScoreBlock = 256;
constexpr int kSelectBlock = 256;
constexpr int kAttentionBlock = 256;
constexpr int kAttentionMaxWarps = kAttentionBlock / 32;
// Scratch the scores of one chunk of queries may take (floats).
constexpr int64_t kScoreScratchFloats = int64_t{32} << 20;

__global__ void store_raw_kernel(const float* keys, int64_t dim, const int32_t* positions, float* raw) {
    vendor::wait_for_previous_kernel();
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t t = blockIdx.y;
    if (i < dim) raw[static_cast<int64_t>(positions[t]) * dim + i] = keys[t * dim + i];
}

// Block per token: when the token completes a block, that block's pooled key.
__global__ void pool_block_kernel(const float* raw, int64_t dim, int64_t ratio, const int32_t* positions,
                                  const float* k_norm, float eps, GpuRope rope, float* pooled) {
    vendor::wait_for_previous_kernel();
    __shared__ float row[kMaxIndexDim];
    __shared__ float shared[kMaxWarpsPerBlock];
    const int64_t end = static_cast<int64_t>(positions[blockIdx.x]) + 1;
    if (end % ratio != 0) return;  // the same for the whole block
    const int64_t b = end / ratio - 1;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
        float v = 0.0f;
        for (int64_t j = 0; j < ratio; ++j) v += raw[(b * ratio + j) * dim + i];
        v /= static_cast<float>(ratio);
        row[i] = v;
        sum += v * v;
    }
    const float scale = 1.0f / sqrtf(block_sum(sum, shared) / static_cast<float>(dim) + eps);
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) row[i] = row[i] * scale * k_norm[i];
    __syncthreads();
    // Roped at the block's first position: pair (a, b) of each rotated index, the rest as it is.
    const int64_t half = rope.rope_dims / 2;
    float* out = pooled + b * dim;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
        float v = row[i];
        if (i < rope.rope_dims) {
            const int64_t pair = rope.neox ? (i < half ? i : i - half) : i / 2;
            const int64_t lo = rope.neox ? pair : 2 * pair, hi = rope.neox ? pair + half : 2 * pair + 1;
            float c, s;
            rope_cos_sin(rope, static_cast<int32_t>(b * ratio), pair, c, s);
            const float x0 = row[lo], x1 = row[hi];
            v = i == lo ? x0 * c - x1 * s : x0 * s + x1 * c;
        }
        out[i] = v;
    }
}

// Block (x: groups of blocks, one per warp; y: query): s_b for every complete block b of a query
// that selects. scores: rows of `stride` per query of the chunk.
__global__ void qsa_score_kernel(const float* q, const int32_t* positions, int64_t n_head, int64_t dim, int64_t ratio,
                                 int64_t keep, const float* pooled, float* scores, int64_t stride) {
    vendor::wait_for_previous_kernel();
    __shared__ float qs[kMaxIndexQuery];
    const int64_t t = blockIdx.y;
    const int64_t n_blocks = (static_cast<int64_t>(positions[t]) + 1) / ratio;
    if (n_blocks <= keep) return;  // the same for the whole block
    const int warp = static_cast<int>(threadIdx.x) / vendor::kWarpSize, lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    const int n_warps = static_cast<int>(blockDim.x) / vendor::kWarpSize;
    for (int64_t i = threadIdx.x; i < n_head * dim; i += blockDim.x) qs[i] = q[t * n_head * dim + i];
    __syncthreads();
    const int64_t b = static_cast<int64_t>(blockIdx.x) * n_warps + warp;
    if (b >= n_blocks) return;
    const float* kb = pooled + b * dim;
    float sum = 0.0f;
    for (int64_t h = 0; h < n_head; ++h) {
        float dot = 0.0f;
        for (int64_t i = lane; i < dim; i += vendor::kWarpSize) dot += qs[h * dim + i] * kb[i];
        sum += fmaxf(warp_sum(dot), 0.0f);
    }
    if (lane == 0) scores[t * stride + b] = sum * (1.0f / sqrtf(static_cast<float>(dim)));
}

// Scores as unsigned keys in the same order (+0 and -0 alike, as the CPU's comparisons have them).
__device__ __forceinline__ uint32_t order_key(float v) {
    const uint32_t u = __float_as_uint(v == 0.0f ? 0.0f : v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Exclusive prefix sum of v over the block (blockDim.x <= kSelectBlock); `total` gets the sum.
__device__ __forceinline__ int block_exclusive_scan(int v, int* buf, int& total) {
    const int i = static_cast<int>(threadIdx.x);
    buf[i] = v;
    __syncthreads();
    for (int offset = 1; offset < static_cast<int>(blockDim.x); offset *= 2) {
        const int add = i >= offset ? buf[i - offset] : 0;
        __syncthreads();
        buf[i] += add;
        __syncthreads();
    }
    const int inclusive = buf[i];
    total = buf[blockDim.x - 1];
    __syncthreads();
    return inclusive - v;
}

// Block per query that selects: the keep best scores' block ids (ties to the lower id), ascending.
// A radix select finds the keep-th largest key T byte by byte from the top; the blocks above T
// and the first of those equal to T are then written in id order.
__global__ void qsa_select_kernel(const float* scores, int64_t stride, const int32_t* positions, int64_t ratio,
                                  int64_t keep, int32_t* blocks) {
    vendor::wait_for_previous_kernel();
    __shared__ int hist[256];
    __shared__ int scan[kSelectBlock];
    __shared__ uint32_t s_prefix;
    __shared__ int64_t s_remaining;
    const int64_t t = blockIdx.x;
    const int64_t n_blocks = (static_cast<int64_t>(positions[t]) + 1) / ratio;
    if (n_blocks <= keep) return;
    const float* s = scores + t * stride;
    uint32_t prefix = 0, mask = 0;
    int64_t remaining = keep;  // how many of the keys matching prefix are still to take
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
        __syncthreads();
        for (int64_t b = threadIdx.x; b < n_blocks; b += blockDim.x) {
            const uint32_t u = order_key(s[b]);
            if ((u & mask) == prefix) atomicAdd(&hist[(u >> shift) & 255u], 1);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int64_t above = 0;
            for (int d = 255; d >= 0; --d) {
                if (above + hist[d] >= remaining) {
                    s_prefix = prefix | (static_cast<uint32_t>(d) << shift);
                    s_remaining = remaining - above;
                    break;
                }
                above += hist[d];
            }
        }
        __syncthreads();
        prefix = s_prefix;
        remaining = s_remaining;
        mask |= 255u << shift;
        __syncthreads();
    }
    // prefix is T; `remaining` of the keys equal to T are kept, the lowest ids first.
    int64_t written = 0, equal_seen = 0;
    int32_t* out = blocks + t * keep;
    for (int64_t base = 0; base < n_blocks; base += blockDim.x) {
        const int64_t b = base + threadIdx.x;
        const uint32_t u = b < n_blocks ? order_key(s[b]) : 0u;
        const bool above = b < n_blocks && u > prefix, equal = b < n_blocks && u == prefix;
        int equal_total = 0, taken_total = 0;
        const int equal_rank = block_exclusive_scan(equal ? 1 : 0, scan, equal_total);
        const bool take = above || (equal && equal_seen + equal_rank < remaining);
        const int at = block_exclusive_scan(take ? 1 : 0, scan, taken_total);
        if (take) out[written + at] = static_cast<int32_t>(b);
        written += taken_total;
        equal_seen += equal_total;
    }
}

// The keys a selecting query reads, numbered 0 .. n_selected + tail: the kept blocks' keys in
// block order, then the tail after the last complete block.
struct SelectedKeys {
    const int32_t* blocks;
    int64_t ratio, n_selected, tail_begin;
    __device__ __forceinline__ int64_t operator()(int64_t i) const {
        return i < n_selected ? static_cast<int64_t>(blocks[i / ratio]) * ratio + i % ratio : tail_begin + (i - n_selected);
    }
};

// Block (x: head, y: token), as attention_rows_kernel (ops_attention.cu) over the selection.
template <typename KV>
__global__ void qsa_attention_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions,
                                     GpuAttentionParams p, GpuKeySelection sel, float* out) {
    vendor::wait_for_previous_kernel();
    __shared__ RowShared<kAttentionMaxWarps> shared;
    const int warp = static_cast<int>(threadIdx.x) / vendor::kWarpSize;
    const int n_warps = static_cast<int>(blockDim.x) / vendor::kWarpSize;
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int64_t kv_head = h / (p.n_head / p.n_head_kv);
    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const HeadRows<KV> rows{keys + kv_head * p.head_dim_k, values + kv_head * p.head_dim_v, k_stride, v_stride,
                            p.head_dim_k, p.head_dim_v};
    const int64_t n_visible = static_cast<int64_t>(positions[t]) + 1, n_blocks = n_visible / sel.ratio;

    float qv[kRowPerLane], acc[kRowPerLane];
    load_query_row(q + (t * p.n_head + h) * p.head_dim_k, p.head_dim_k, p.scale, qv);
#pragma unroll
    for (int i = 0; i < kRowPerLane; ++i) acc[i] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    if (n_blocks <= sel.keep) {
        warp_attend(qv, rows, 0, n_visible, warp, n_warps, m, l, acc);
    } else {
        const SelectedKeys at{sel.blocks + t * sel.keep, sel.ratio, sel.keep * sel.ratio, n_blocks * sel.ratio};
        warp_attend(qv, rows, 0, at.n_selected + (n_visible - at.tail_begin), warp, n_warps, m, l, acc, at);
    }
    publish_warp(shared, warp, m, l, acc, p.head_dim_v);
    __syncthreads();
    const RowTotals totals = row_totals(shared, n_warps, -INFINITY);
    const float inv = 1.0f / totals.sum;
    float* o = out + (t * p.n_head + h) * p.head_dim_v;
    for (int64_t d = threadIdx.x; d < p.head_dim_v; d += blockDim.x) o[d] = row_value(shared, n_warps, totals, d) * inv;
}

}  // namespace

GpuIndexKeys::GpuIndexKeys(DevicePool& pool, const std::vector<int64_t>& ratios, int64_t n_ctx, int64_t dim,
                           std::string* error)
    : ratios_(ratios), n_ctx_(n_ctx), dim_(dim) {
    std::vector<Layer> layers(ratios.size());
    for (size_t il = 0; il < ratios.size(); ++il) {
        if (ratios[il] <= 0) continue;
        layers[il].raw = pool.allocate(static_cast<uint64_t>(n_ctx * dim) * sizeof(float), error);
        if (!layers[il].raw) return;
        const int64_t n_blocks = std::max<int64_t>(1, n_ctx / ratios[il]);
        layers[il].pooled = pool.allocate(static_cast<uint64_t>(n_blocks * dim) * sizeof(float), error);
        if (!layers[il].pooled) return;
    }
    layers_ = std::move(layers);
    ok_ = true;
}

uint64_t GpuIndexKeys::bytes() const {
    uint64_t total = 0;
    for (const Layer& L : layers_) total += L.raw.bytes() + L.pooled.bytes();
    return total;
}

void gpu_qsa_store_keys(const float* keys, int64_t n_tokens, const int32_t* positions, GpuIndexKeys& cache,
                        int64_t layer, const float* k_norm, float eps, const GpuRope& rope, GpuContext& ctx) {
    const int64_t dim = cache.dim(), ratio = cache.ratio(layer);
    STRATA_CHECK(ratio > 0 && dim <= kMaxIndexDim && rope.rope_dims <= dim && rope.rope_dims % 2 == 0,
                 "gpu_qsa_store_keys: a layer without index keys, or keys wider than the kernel takes");
    if (n_tokens == 0) return;
    const dim3 grid(grid_for(dim, kStoreBlock), static_cast<unsigned>(n_tokens));
    launch_chained(ctx, store_raw_kernel, grid, kStoreBlock, 0, keys, dim, positions, cache.raw(layer));
    launch_chained(ctx, pool_block_kernel, static_cast<unsigned>(n_tokens), kPoolBlock, 0,
                   static_cast<const float*>(cache.raw(layer)), dim, ratio, positions, k_norm, eps, rope,
                   cache.pooled(layer));
}

int64_t gpu_qsa_select_chunk(int64_t n_ctx, int64_t ratio) {
    const int64_t stride = std::max<int64_t>(1, n_ctx / ratio);
    return std::clamp<int64_t>(kScoreScratchFloats / stride, 1, 65535);
}

void gpu_qsa_select(const float* q, int64_t n_tokens, const int32_t* positions, int64_t n_head,
                    const GpuIndexKeys& cache, int64_t layer, int64_t keep, float* scores, int32_t* blocks,
                    GpuContext& ctx) {
    const int64_t dim = cache.dim(), ratio = cache.ratio(layer);
    STRATA_CHECK(ratio > 0 && keep > 0 && n_head * dim <= kMaxIndexQuery,
                 "gpu_qsa_select: a layer without index keys, or a query wider than the kernel takes");
    const int64_t stride = std::max<int64_t>(1, cache.n_ctx() / ratio);
    const int64_t chunk = gpu_qsa_select_chunk(cache.n_ctx(), ratio);
    const int warps = kScoreBlock / vendor::kWarpSize;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += chunk) {
        const int64_t n = std::min(chunk, n_tokens - t0);
        const dim3 grid(grid_for(stride, warps), static_cast<unsigned>(n));
        launch_chained(ctx, qsa_score_kernel, grid, kScoreBlock, 0, q + t0 * n_head * dim, positions + t0, n_head, dim,
                       ratio, keep, static_cast<const float*>(cache.pooled(layer)), scores, stride);
        launch_chained(ctx, qsa_select_kernel, static_cast<unsigned>(n), kSelectBlock, 0,
                       static_cast<const float*>(scores), stride, positions + t0, ratio, keep, blocks + t0 * keep);
    }
}

void gpu_qsa_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                       const GpuAttentionParams& p, const GpuKeySelection& sel, float* out, GpuContext& ctx) {
    STRATA_CHECK(p.head_dim_k <= kGpuMaxHeadDim && p.head_dim_v <= kGpuMaxHeadDim && p.n_head_kv > 0 &&
                     p.n_head % p.n_head_kv == 0 && sel.ratio > 0 && sel.keep > 0 && n_tokens <= 65535,
                 "gpu_qsa_attention: a head shape or selection the kernel does not take");
    if (n_tokens == 0) return;
    if (kv.stored_type() == KvCacheType::Q8_0) gpu_kv_q8_sync(kv, layer, positions, 0, n_tokens, ctx);
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(n_tokens));
    if (kv.type() == KvCacheType::F16) {
        launch_chained(ctx, qsa_attention_kernel<uint16_t>, grid, kAttentionBlock, 0, q,
                       static_cast<const uint16_t*>(kv.keys(layer)), static_cast<const uint16_t*>(kv.values(layer)),
                       positions, p, sel, out);
    } else {
        launch_chained(ctx, qsa_attention_kernel<float>, grid, kAttentionBlock, 0, q,
                       static_cast<const float*>(kv.keys(layer)), static_cast<const float*>(kv.values(layer)),
                       positions, p, sel, out);
    }
}

}  // namespace strata::gpu
