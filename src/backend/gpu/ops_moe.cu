// Mixture-of-experts routing on the device (gpu_ops.h): softmax top-k, the expert-sorted plan the
// grouped matmul reads, and the weighted combine. CPU reference: moe_ffn_block in
// model/blocks/ffn_blocks.cpp. Nothing here waits for the host: the number of tiles stays on the
// device and the matmul launches an upper bound of blocks.
#include <algorithm>
#include <climits>
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kRouteBlock = 64;   // one warp per token: 1 (wave64) or 2 (wave32) tokens per block
constexpr int kPlanBlock = 256;
constexpr int kCombineBlock = 256;
constexpr int kMaxExperts = 4096;

// Selection order: higher probability first, the lower index on ties (as std::partial_sort with
// the CPU block's comparator).
__device__ __forceinline__ bool ranks_before(float p, int e, float q, int f) { return p > q || (p == q && e < f); }

__global__ void route_kernel(const float* logits, int64_t n_tokens, int n_expert, int k, bool normalize, int32_t* ids,
                             float* weights) {
    vendor::wait_for_previous_kernel();
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x / vendor::kWarpSize) + threadIdx.x / vendor::kWarpSize;
    if (t >= n_tokens) return;
    const float* l = logits + t * n_expert;
    float m = -INFINITY;
    for (int e = lane; e < n_expert; e += vendor::kWarpSize) m = fmaxf(m, l[e]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int e = lane; e < n_expert; e += vendor::kWarpSize) sum += expf(l[e] - m);
    const float inv = 1.0f / warp_sum(sum);

    // k passes, each finding the best expert ranked after the previous pass's choice: no marks
    // to keep, whatever the number of experts.
    float prev_p = INFINITY, kept = 0.0f;
    int prev_e = -1;
    for (int j = 0; j < k; ++j) {
        float best_p = -1.0f;
        int best_e = INT_MAX;
        for (int e = lane; e < n_expert; e += vendor::kWarpSize) {
            const float p = expf(l[e] - m) * inv;
            if (ranks_before(prev_p, prev_e, p, e) && ranks_before(p, e, best_p, best_e)) best_p = p, best_e = e;
        }
        for (int offset = vendor::kWarpSize / 2; offset > 0; offset /= 2) {
            const float other_p = vendor::shfl_xor(best_p, offset);
            const int other_e = vendor::shfl_xor(best_e, offset);
            if (ranks_before(other_p, other_e, best_p, best_e)) best_p = other_p, best_e = other_e;
        }
        if (lane == 0) ids[t * k + j] = best_e, weights[t * k + j] = best_p;
        kept += best_p;
        prev_p = best_p, prev_e = best_e;
    }
    if (normalize && lane == 0) {
        for (int j = 0; j < k; ++j) weights[t * k + j] /= kept;
    }
}

// The plan's index of a pair's expert: its id less expert_begin, or -1 for an expert outside the
// plan's window (another GPU's, under a tensor split).
__device__ __forceinline__ int plan_expert(const int32_t* ids, int64_t p, int expert_begin, int n_expert) {
    const int e = ids[p] - expert_begin;
    return e >= 0 && e < n_expert ? e : -1;
}

// One block: count pairs per expert, cut each expert's pairs into tiles, scatter pair indices
// into expert order. Order within an expert does not matter (each pair has its own output row).
__global__ void plan_kernel(const int32_t* ids, int64_t n_pairs, int n_expert, int expert_begin, int tile_columns,
                            int32_t* sorted, int32_t* tiles, int32_t* n_tiles) {
    vendor::wait_for_previous_kernel();
    extern __shared__ int32_t shared[];
    int32_t* count = shared;
    int32_t* cursor = shared + n_expert;
    for (int e = threadIdx.x; e < n_expert; e += blockDim.x) count[e] = 0;
    __syncthreads();
    for (int64_t p = threadIdx.x; p < n_pairs; p += blockDim.x) {
        const int e = plan_expert(ids, p, expert_begin, n_expert);
        if (e >= 0) atomicAdd(&count[e], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t offset = 0, nt = 0;
        for (int e = 0; e < n_expert; ++e) {
            cursor[e] = offset;
            for (int32_t s = 0; s < count[e]; s += tile_columns) {
                tiles[3 * nt] = e;
                tiles[3 * nt + 1] = offset + s;
                tiles[3 * nt + 2] = min(tile_columns, count[e] - s);
                ++nt;
            }
            offset += count[e];
        }
        *n_tiles = nt;
    }
    __syncthreads();
    for (int64_t p = threadIdx.x; p < n_pairs; p += blockDim.x) {
        const int e = plan_expert(ids, p, expert_begin, n_expert);
        if (e >= 0) sorted[atomicAdd(&cursor[e], 1)] = static_cast<int32_t>(p);
    }
}

// x[t] += Σ_j weights · expert_out over the token's pairs (kOwned: only those whose expert is in
// [expert_begin, expert_end), the rows of the others never computed here; and into x rather than
// onto it: a tensor split's part of the sum).
template <bool kOwned>
__global__ void combine_kernel(const float* expert_out, const float* weights, const int32_t* ids, int64_t n_tokens,
                               int64_t k, int64_t n, int expert_begin, int expert_end, float* x) {
    vendor::wait_for_previous_kernel();
    const int64_t total = n_tokens * n;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t t = i / n, d = i % n;
        float s = 0.0f;
        for (int64_t j = 0; j < k; ++j) {
            if (kOwned && (ids[t * k + j] < expert_begin || ids[t * k + j] >= expert_end)) continue;
            s += weights[t * k + j] * expert_out[(t * k + j) * n + d];
        }
        if (kOwned) x[i] = s;
        else x[i] += s;
    }
}

unsigned combine_grid(int64_t n_tokens, int64_t n, const GpuContext& ctx) {
    const int64_t cap = static_cast<int64_t>(ctx.device().multiprocessors) * 8;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(cap, (n_tokens * n + kCombineBlock - 1) / kCombineBlock)));
}

}  // namespace

void gpu_moe_route_softmax_topk(const float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, bool normalize,
                                int32_t* ids, float* weights, GpuContext& ctx) {
    STRATA_CHECK(k > 0 && k <= n_expert && n_expert <= kMaxExperts, "gpu_moe_route: need 0 < k <= n_expert <= 4096");
    if (n_tokens == 0) return;
    const int64_t tokens_per_block = kRouteBlock / ctx.warp_size();
    launch_chained(ctx, route_kernel, grid_for(n_tokens, static_cast<int>(tokens_per_block)), kRouteBlock, 0, logits,
                   n_tokens, static_cast<int>(n_expert), static_cast<int>(k), normalize, ids, weights);
}

MoePlan gpu_moe_plan(const int32_t* ids, int64_t n_pairs, int64_t n_expert, int scratch_slot, GpuContext& ctx,
                     int tile_columns, int64_t expert_begin) {
    STRATA_CHECK(n_expert <= kMaxExperts && n_pairs < INT_MAX, "gpu_moe_plan: too many experts or pairs");
    STRATA_CHECK(tile_columns == kGpuMatmulColumns || tile_columns == kGpuTiledColumns, "gpu_moe_plan: tile width");
    MoePlan plan;
    plan.tile_columns = tile_columns;
    plan.max_tile_pairs = tile_columns;
    plan.n_pairs = n_pairs;
    // Σ_e ceil(c_e / w) ≤ n_pairs / w + (experts with a pair), and never more than n_pairs.
    plan.max_tiles = std::min(n_pairs, n_pairs / tile_columns + n_expert);
    plan.sorted = static_cast<int32_t*>(ctx.scratch(scratch_slot, std::max<int64_t>(1, n_pairs) * sizeof(int32_t)));
    plan.tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 1, std::max<int64_t>(1, plan.max_tiles) * 3 * sizeof(int32_t)));
    plan.n_tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 2, sizeof(int32_t)));
    if (n_pairs == 0) return plan;
    launch_chained(ctx, plan_kernel, 1, kPlanBlock, 2 * n_expert * sizeof(int32_t), ids, n_pairs,
                   static_cast<int>(n_expert), static_cast<int>(expert_begin), tile_columns, plan.sorted, plan.tiles,
                   plan.n_tiles);
    return plan;
}

void gpu_moe_combine(const float* expert_out, const float* weights, int64_t n_tokens, int64_t k, int64_t n, float* x,
                     GpuContext& ctx) {
    if (n_tokens == 0) return;
    launch_chained(ctx, combine_kernel<false>, combine_grid(n_tokens, n, ctx), kCombineBlock, 0, expert_out, weights,
                   static_cast<const int32_t*>(nullptr), n_tokens, k, n, 0, 0, x);
}

void gpu_moe_combine_owned(const float* expert_out, const float* weights, const int32_t* ids, int64_t n_tokens,
                           int64_t k, int64_t n, int64_t expert_begin, int64_t expert_end, float* out, GpuContext& ctx) {
    if (n_tokens == 0) return;
    launch_chained(ctx, combine_kernel<true>, combine_grid(n_tokens, n, ctx), kCombineBlock, 0, expert_out, weights, ids,
                   n_tokens, k, n, static_cast<int>(expert_begin), static_cast<int>(expert_end), out);
}

}  // namespace strata::gpu
