// DeepSeek-V2/V3's ops (gpu_ops_deepseek.h): the grouped routing, the per-head plan and products,
// and the row passes around the latent cache. CPU references: route_grouped (moe_routing.cpp) and
// mla_attention_block (mla_attention_block.cpp).
#include <algorithm>
#include <climits>
#include <cmath>

#include "backend/gpu/gpu_ops_deepseek.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/kv_access.cuh"
#include "backend/gpu/kernels/rope.cuh"

namespace strata::gpu {

namespace {

constexpr int kRouteBlock = 64;   // one warp per token: 1 (wave64) or 2 (wave32) tokens per block
constexpr int kMaxExperts = 4096;
constexpr int kElemBlock = 256;
constexpr int kKvBlock = 128;     // threads per kv_a row (DeepSeek-V3: 512 + 64 values)

// Selection order: the higher value first, the lower index on ties (route_grouped's top_k).
__device__ __forceinline__ bool ranks_before(float p, int e, float q, int f) { return p > q || (p == q && e < f); }

// The warp's best (value, index) by ranks_before; every lane gets it.
__device__ __forceinline__ void warp_best(float& v, int& i) {
    for (int offset = vendor::kWarpSize / 2; offset > 0; offset /= 2) {
        const float other_v = vendor::shfl_xor(v, offset);
        const int other_i = vendor::shfl_xor(i, offset);
        if (ranks_before(other_v, other_i, v, i)) v = other_v, i = other_i;
    }
}

struct GroupedArgs {
    int n_expert, k, n_group, n_group_used, per_group;
    bool grouped;  // 1 < n_group and n_group_used < n_group: some groups are excluded
    bool sigmoid, normalize;
    float scale;
    const float* bias;
};

// One token's scores, computed where needed (cheaper than keeping them: V3 has 256 experts).
struct TokenScores {
    const float* logits;
    const float* bias;
    bool sigmoid;
    float max, inv;  // softmax only
    __device__ float score(int e) const {
        return sigmoid ? 1.0f / (1.0f + expf(-logits[e])) : expf(logits[e] - max) * inv;
    }
    __device__ float choice(int e) const { return score(e) + (bias ? bias[e] : 0.0f); }
};

// The sum of group g's two best choices (its best alone in groups of one), as route_grouped.
__device__ float group_merit(const TokenScores& s, int g, int per_group) {
    float best = -INFINITY, second = -INFINITY;
    for (int e = g * per_group; e < (g + 1) * per_group; ++e) {
        const float c = s.choice(e);
        if (c > best) second = best, best = c;
        else if (c > second) second = c;
    }
    return per_group >= 2 ? best + second : best;
}

// k passes (first over groups, then over experts), each finding the best candidate ranked after
// the previous pass's pick, as the softmax routing of ops_moe.cu: nothing to mark, however many.
__global__ void route_grouped_kernel(const float* logits, int64_t n_tokens, GroupedArgs a, int32_t* ids, float* weights) {
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x / vendor::kWarpSize) + threadIdx.x / vendor::kWarpSize;
    if (t >= n_tokens) return;
    TokenScores s{logits + t * a.n_expert, a.bias, a.sigmoid, 0.0f, 1.0f};
    if (!a.sigmoid) {
        float m = -INFINITY;
        for (int e = lane; e < a.n_expert; e += vendor::kWarpSize) m = fmaxf(m, s.logits[e]);
        m = warp_max(m);
        float sum = 0.0f;
        for (int e = lane; e < a.n_expert; e += vendor::kWarpSize) sum += expf(s.logits[e] - m);
        s.max = m, s.inv = 1.0f / warp_sum(sum);
    }

    uint64_t keep = 0;  // bit g: group g is eligible (grouped routing only)
    if (a.grouped) {
        float prev_v = INFINITY;
        int prev_g = -1;
        for (int j = 0; j < a.n_group_used; ++j) {
            float best_v = -INFINITY;
            int best_g = INT_MAX;
            for (int g = lane; g < a.n_group; g += vendor::kWarpSize) {
                const float v = group_merit(s, g, a.per_group);
                if (ranks_before(prev_v, prev_g, v, g) && ranks_before(v, g, best_v, best_g)) best_v = v, best_g = g;
            }
            warp_best(best_v, best_g);
            if (best_g < a.n_group) keep |= uint64_t{1} << best_g;  // else NaN merits: no group
            prev_v = best_v, prev_g = best_g;
        }
    }

    float prev_c = INFINITY, kept = 0.0f;
    int prev_e = -1;
    for (int j = 0; j < a.k; ++j) {
        float best_c = -INFINITY;
        int best_e = INT_MAX;
        for (int e = lane; e < a.n_expert; e += vendor::kWarpSize) {
            if (a.grouped && !((keep >> (e / a.per_group)) & 1u)) continue;
            const float c = s.choice(e);
            if (ranks_before(prev_c, prev_e, c, e) && ranks_before(c, e, best_c, best_e)) best_c = c, best_e = e;
        }
        warp_best(best_c, best_e);
        // NaN logits rank nowhere: then expert 0 with weight 0, an id the plan can still count.
        const bool found = best_e < a.n_expert;
        const float w = found ? s.score(best_e) : 0.0f;
        if (lane == 0) ids[t * a.k + j] = found ? best_e : 0, weights[t * a.k + j] = w;
        kept += w;
        prev_c = best_c, prev_e = best_e;
    }
    if (lane == 0) {
        const float norm = a.normalize ? 1.0f / (kept + 1e-20f) : 1.0f;
        for (int j = 0; j < a.k; ++j) weights[t * a.k + j] = weights[t * a.k + j] * norm * a.scale;
    }
}

// Sorted position c = h·n_tokens + t holds pair t·n_head + h; tile i = h·tiles_per_head + j
// covers tokens [j·w, j·w + w) of head h.
__global__ void head_plan_kernel(int64_t n_tokens, int64_t n_head, int tile_columns, int64_t tiles_per_head,
                                 int32_t* sorted, int32_t* tiles, int32_t* n_tiles) {
    const int64_t n_pairs = n_tokens * n_head, total_tiles = n_head * tiles_per_head;
    const int64_t start = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = start; i < n_pairs || i < total_tiles; i += stride) {
        if (i < n_pairs) {
            const int64_t h = i / n_tokens, tok = i % n_tokens;
            sorted[i] = static_cast<int32_t>(tok * n_head + h);
        }
        if (i < total_tiles) {
            const int64_t h = i / tiles_per_head, first = (i % tiles_per_head) * tile_columns;
            tiles[3 * i] = static_cast<int32_t>(h);
            tiles[3 * i + 1] = static_cast<int32_t>(h * n_tokens + first);
            tiles[3 * i + 2] = static_cast<int32_t>(min(static_cast<int64_t>(tile_columns), n_tokens - first));
        }
    }
    if (start == 0) *n_tiles = static_cast<int32_t>(total_tiles);
}

__global__ void copy_rows_kernel(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t n_rows,
                                 int64_t width) {
    const int64_t total = n_rows * width;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = i / width, c = i % width;
        dst[r * dst_stride + c] = src[r * src_stride + c];
    }
}

// One thread per rotated pair of one head of one token: rope_kernel's arithmetic (ops_elementwise.cu)
// from q's tail into q_abs's.
__global__ void q_rope_absorb_kernel(const float* q, int64_t n_head, int64_t head_dim, int64_t lora, GpuRope p,
                                     const int32_t* positions, float* q_abs) {
    const int64_t half = p.rope_dims / 2;
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t h = blockIdx.y, t = blockIdx.z;
    if (i >= half) return;
    float c, s;
    rope_cos_sin(p, positions[t], i, c, s);
    const float* src = q + (t * n_head + h) * head_dim + (head_dim - p.rope_dims);
    float* dst = q_abs + (t * n_head + h) * (lora + p.rope_dims) + lora;
    const int64_t a = p.neox ? i : 2 * i, b = p.neox ? i + half : 2 * i + 1;
    const float x0 = src[a], x1 = src[b];
    dst[a] = x0 * c - x1 * s;
    dst[b] = x0 * s + x1 * c;
}

// One block per token: norm the latent (rms_norm_kernel's arithmetic), rope the key, store.
template <typename KV>
__global__ void kv_norm_rope_store_kernel(float* kv_a, int64_t lora, const float* norm, float eps, GpuRope rope,
                                          const int32_t* positions, KV* keys, KV* values) {
    __shared__ float reduce[kMaxWarpsPerBlock];
    const int64_t width = lora + rope.rope_dims;
    float* row = kv_a + blockIdx.x * width;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < lora; i += blockDim.x) sum += row[i] * row[i];
    const float scale = rsqrtf(block_sum(sum, reduce) / static_cast<float>(lora) + eps);
    for (int64_t i = threadIdx.x; i < lora; i += blockDim.x) row[i] = row[i] * scale * (norm ? norm[i] : 1.0f);

    const int32_t pos = positions[blockIdx.x];
    float* key = row + lora;
    const int64_t half = rope.rope_dims / 2;
    for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {  // pairs are disjoint: no races
        float c, s;
        rope_cos_sin(rope, pos, i, c, s);
        const int64_t a = rope.neox ? i : 2 * i, b = rope.neox ? i + half : 2 * i + 1;
        const float x0 = key[a], x1 = key[b];
        key[a] = x0 * c - x1 * s;
        key[b] = x0 * s + x1 * c;
    }
    __syncthreads();  // the row's global writes, seen by every thread of the block

    KV* key_row = keys + static_cast<int64_t>(pos) * width;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) store_kv(key_row, i, row[i]);
    KV* value_row = values + static_cast<int64_t>(pos) * lora;
    for (int64_t i = threadIdx.x; i < lora; i += blockDim.x) store_kv(value_row, i, row[i]);
}

unsigned elementwise_grid(int64_t n, const GpuContext& ctx) {
    const int64_t cap = static_cast<int64_t>(ctx.device().multiprocessors) * 8;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(cap, (n + kElemBlock - 1) / kElemBlock)));
}

}  // namespace

void gpu_moe_route_grouped(const float* logits, int64_t n_tokens, const GpuGroupedRouting& p, int32_t* ids,
                           float* weights, GpuContext& ctx) {
    STRATA_CHECK(p.n_expert > 0 && p.n_expert <= kMaxExperts, "gpu_moe_route_grouped: need 0 < n_expert <= 4096");
    STRATA_CHECK(p.n_group >= 1 && p.n_group <= kGpuMaxExpertGroups && p.n_expert % p.n_group == 0,
                 "gpu_moe_route_grouped: experts must split evenly into at most kGpuMaxExpertGroups groups");
    STRATA_CHECK(p.n_group_used >= 1 && p.n_group_used <= p.n_group, "gpu_moe_route_grouped: more groups used than exist");
    const int64_t per_group = p.n_expert / p.n_group;
    STRATA_CHECK(p.k > 0 && p.k <= p.n_group_used * per_group, "gpu_moe_route_grouped: fewer eligible experts than k");
    if (n_tokens == 0) return;
    GroupedArgs a;
    a.n_expert = static_cast<int>(p.n_expert), a.k = static_cast<int>(p.k);
    a.n_group = static_cast<int>(p.n_group), a.n_group_used = static_cast<int>(p.n_group_used);
    a.per_group = static_cast<int>(per_group);
    a.grouped = p.n_group > 1 && p.n_group_used < p.n_group;
    a.sigmoid = p.sigmoid, a.normalize = p.normalize, a.scale = p.scale, a.bias = p.selection_bias;
    const int tokens_per_block = kRouteBlock / ctx.warp_size();
    route_grouped_kernel<<<grid_for(n_tokens, tokens_per_block), kRouteBlock, 0, stream_of(ctx)>>>(logits, n_tokens, a,
                                                                                                   ids, weights);
    STRATA_GPU_LAUNCHED();
}

MoePlan gpu_head_plan(int64_t n_tokens, int64_t n_head, int tile_columns, int scratch_slot, GpuContext& ctx) {
    STRATA_CHECK(tile_columns == kGpuMatmulColumns || tile_columns == kGpuTiledColumns, "gpu_head_plan: tile width");
    STRATA_CHECK(n_head > 0 && n_tokens >= 0 && n_tokens * n_head < INT_MAX, "gpu_head_plan: too many (token, head) pairs");
    const int64_t tiles_per_head = (n_tokens + tile_columns - 1) / tile_columns;
    MoePlan plan;
    plan.tile_columns = tile_columns;
    plan.max_tile_pairs = static_cast<int>(std::min<int64_t>(tile_columns, std::max<int64_t>(1, n_tokens)));
    plan.n_pairs = n_tokens * n_head;
    plan.max_tiles = n_head * tiles_per_head;
    plan.sorted = static_cast<int32_t*>(ctx.scratch(scratch_slot, std::max<int64_t>(1, plan.n_pairs) * sizeof(int32_t)));
    plan.tiles = static_cast<int32_t*>(
        ctx.scratch(scratch_slot + 1, std::max<int64_t>(1, plan.max_tiles) * 3 * sizeof(int32_t)));
    plan.n_tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 2, sizeof(int32_t)));
    if (plan.n_pairs == 0) return plan;
    head_plan_kernel<<<elementwise_grid(std::max(plan.n_pairs, plan.max_tiles), ctx), kElemBlock, 0, stream_of(ctx)>>>(
        n_tokens, n_head, tile_columns, tiles_per_head, plan.sorted, plan.tiles, plan.n_tiles);
    STRATA_GPU_LAUNCHED();
    return plan;
}

void gpu_matmul_heads(const DeviceWeight& w, const MoePlan& plan, const float* x, int64_t x_stride, float* y,
                      int64_t y_stride, int scratch_slot, GpuContext& ctx) {
    const int64_t n_in = w.ne[0], n_out = w.ne[1], rows = plan.n_pairs;
    STRATA_CHECK(w.data != nullptr, "gpu_matmul_heads with an absent weight");
    STRATA_CHECK(x_stride >= n_in && y_stride >= n_out, "gpu_matmul_heads: rows narrower than the weight's input or output");
    if (rows == 0) return;
    const float* packed_x = x;
    if (x_stride != n_in) {
        float* p = ctx.scratch_floats(scratch_slot, static_cast<uint64_t>(rows * n_in));
        gpu_copy_rows(x, x_stride, p, n_in, rows, n_in, ctx);
        packed_x = p;
    }
    float* packed_y = y_stride == n_out ? y : ctx.scratch_floats(scratch_slot + 1, static_cast<uint64_t>(rows * n_out));
    gpu_matmul_experts(w, plan, packed_x, 1, packed_y, ctx);
    if (packed_y != y) gpu_copy_rows(packed_y, n_out, y, y_stride, rows, n_out, ctx);
}

void gpu_copy_rows(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t n_rows, int64_t width,
                   GpuContext& ctx) {
    STRATA_CHECK(src_stride >= width && dst_stride >= width, "gpu_copy_rows: rows narrower than the width copied");
    if (n_rows * width == 0) return;
    copy_rows_kernel<<<elementwise_grid(n_rows * width, ctx), kElemBlock, 0, stream_of(ctx)>>>(src, src_stride, dst,
                                                                                               dst_stride, n_rows, width);
    STRATA_GPU_LAUNCHED();
}

void gpu_mla_q_rope_absorb(const float* q, int64_t n_tokens, int64_t n_head, int64_t head_dim, int64_t kv_lora_rank,
                           const GpuRope& rope, const int32_t* positions, float* q_abs, GpuContext& ctx) {
    STRATA_CHECK(rope.rope_dims % 2 == 0 && rope.rope_dims <= head_dim,
                 "gpu_mla_q_rope_absorb: rope_dims must be even and at most the head dimension");
    STRATA_CHECK(n_tokens <= 65535 && n_head <= 65535, "gpu_mla_q_rope_absorb: too many tokens or heads for one launch");
    if (n_tokens == 0 || rope.rope_dims == 0) return;
    const int block = 64;
    const dim3 grid(grid_for(rope.rope_dims / 2, block), static_cast<unsigned>(n_head), static_cast<unsigned>(n_tokens));
    q_rope_absorb_kernel<<<grid, block, 0, stream_of(ctx)>>>(q, n_head, head_dim, kv_lora_rank, rope, positions, q_abs);
    STRATA_GPU_LAUNCHED();
}

void gpu_mla_kv_norm_rope_store(float* kv_a, int64_t n_tokens, int64_t kv_lora_rank, const float* norm, float eps,
                                const GpuRope& rope, const int32_t* positions, GpuKvCache& kv, int64_t layer,
                                GpuContext& ctx) {
    STRATA_CHECK(kv_lora_rank > 0 && rope.rope_dims % 2 == 0, "gpu_mla_kv_norm_rope_store: a latent and an even rope tail");
    STRATA_CHECK(kv.k_dim() == kv_lora_rank + rope.rope_dims && kv.v_dim() == kv_lora_rank,
                 "gpu_mla_kv_norm_rope_store: cache rows must be keys of kv_lora_rank + rope_dims, values of kv_lora_rank");
    if (n_tokens == 0) return;
    const unsigned grid = static_cast<unsigned>(n_tokens);
    if (kv.type() == KvCacheType::F16) {
        kv_norm_rope_store_kernel<<<grid, kKvBlock, 0, stream_of(ctx)>>>(
            kv_a, kv_lora_rank, norm, eps, rope, positions, static_cast<uint16_t*>(kv.keys(layer)),
            static_cast<uint16_t*>(kv.values(layer)));
    } else {
        kv_norm_rope_store_kernel<<<grid, kKvBlock, 0, stream_of(ctx)>>>(kv_a, kv_lora_rank, norm, eps, rope, positions,
                                                                         static_cast<float*>(kv.keys(layer)),
                                                                         static_cast<float*>(kv.values(layer)));
    }
    STRATA_GPU_LAUNCHED();
}

}  // namespace strata::gpu
