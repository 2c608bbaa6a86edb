// gpu_moe_route_plan_single (gpu_ops.h): routing and the expert plan of a one-token step in one
// launch. With one token the k chosen experts are distinct, so the plan is fixed in shape (k
// tiles of one pair each, pairs in slot order) and needs no counting or sorting pass: the
// routing warp writes it as it picks the experts. Routing is that of gpu_moe_route_softmax_topk
// (ops_moe.cu) step for step — the same probabilities, order and ties — so ids and weights match.
// gpu_moe_router_route_plan_single also computes the router logits in the same launch: its blocks
// each compute a few logits (as ops_matmul.cu's float kernel does), and the last block to finish
// (a counter in device memory, which that block resets for the next step) routes.
#include <algorithm>
#include <climits>
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/dequant.cuh"

namespace strata::gpu {

namespace {

constexpr int kMaxExperts = 4096;

__device__ __forceinline__ bool ranks_before(float p, int e, float q, int f) { return p > q || (p == q && e < f); }

// One warp (the calling threads' first). tiles[j] = (expert of slot j, sorted position j, 1
// pair); sorted[j] = pair j. Experts outside [expert_begin, expert_end) (another GPU's, under a
// tensor split) get an empty tile, which the expert kernels skip; the plan's experts are
// numbered from expert_begin.
__device__ void route_plan_one_token(const float* logits, int n_expert, int k, bool normalize, int32_t* ids,
                                     float* weights, int32_t* sorted, int32_t* tiles, int32_t* n_tiles,
                                     int expert_begin = 0, int expert_end = INT_MAX) {
    const int lane = static_cast<int>(threadIdx.x);
    float m = -INFINITY;
    for (int e = lane; e < n_expert; e += vendor::kWarpSize) m = fmaxf(m, logits[e]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int e = lane; e < n_expert; e += vendor::kWarpSize) sum += expf(logits[e] - m);
    const float inv = 1.0f / warp_sum(sum);

    float prev_p = INFINITY, kept = 0.0f;
    int prev_e = -1;
    for (int j = 0; j < k; ++j) {  // the best expert ranked after the previous pick
        float best_p = -1.0f;
        int best_e = INT_MAX;
        for (int e = lane; e < n_expert; e += vendor::kWarpSize) {
            const float p = expf(logits[e] - m) * inv;
            if (ranks_before(prev_p, prev_e, p, e) && ranks_before(p, e, best_p, best_e)) best_p = p, best_e = e;
        }
        for (int offset = vendor::kWarpSize / 2; offset > 0; offset /= 2) {
            const float other_p = vendor::shfl_xor(best_p, offset);
            const int other_e = vendor::shfl_xor(best_e, offset);
            if (ranks_before(other_p, other_e, best_p, best_e)) best_p = other_p, best_e = other_e;
        }
        if (lane == 0) {
            ids[j] = best_e, weights[j] = best_p;
            sorted[j] = j;
            const bool mine = best_e >= expert_begin && best_e < expert_end;
            tiles[3 * j] = mine ? best_e - expert_begin : 0, tiles[3 * j + 1] = j, tiles[3 * j + 2] = mine ? 1 : 0;
        }
        kept += best_p;
        prev_p = best_p, prev_e = best_e;
    }
    if (lane == 0) {
        if (normalize) {
            for (int j = 0; j < k; ++j) weights[j] /= kept;
        }
        *n_tiles = k;
    }
}

__global__ void route_plan_single_kernel(const float* logits, int n_expert, int k, bool normalize, int32_t* ids,
                                         float* weights, int32_t* sorted, int32_t* tiles, int32_t* n_tiles) {
    vendor::wait_for_previous_kernel();
    route_plan_one_token(logits, n_expert, k, normalize, ids, weights, sorted, tiles, n_tiles);
}

constexpr int kRouterBlock = 128;  // threads: a row (logit) per warp

// Logit o = router row o · h, one warp per row, lanes over 32-value chunks (the order of
// ops_matmul.cu's matmul_kernel for one column); then the last block routes.
template <TensorType T>
__global__ void router_route_plan_kernel(const uint8_t* w, uint64_t row_bytes, int64_t n_in, int n_expert, const float* h,
                                         float* logits, int k, bool normalize, int32_t* ids, float* weights,
                                         int32_t* sorted, int32_t* tiles, int32_t* n_tiles, unsigned* counter,
                                         int expert_begin, int expert_end) {
    vendor::wait_for_previous_kernel();
    __shared__ float s_logits[kMaxExperts];
    __shared__ bool s_last;
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    const int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x / vendor::kWarpSize) + threadIdx.x / vendor::kWarpSize;
    if (o < n_expert) {
        const uint8_t* row = w + static_cast<uint64_t>(o) * row_bytes;
        float acc = 0.0f;
#pragma unroll 2  // a lane's chunks' loads in flight together (2048-wide rows give each lane two)
        for (int64_t ch = lane; ch < n_in / 32; ch += vendor::kWarpSize) {
            float v[32];
            dequant_chunk<T>(row, ch, v);
            const float4* xp = reinterpret_cast<const float4*>(h + 32 * ch);
            float s = 0.0f;
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float4 a = xp[i];
                s += v[4 * i] * a.x + v[4 * i + 1] * a.y + v[4 * i + 2] * a.z + v[4 * i + 3] * a.w;
            }
            acc += s;
        }
        acc = warp_sum(acc);
        if (lane == 0) logits[o] = acc;
    }
    // The last block to get here sees every block's logits: each publishes its writes before it
    // counts itself (threadfence), and the last one reads them through volatile loads.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        s_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    const volatile float* shared_logits = logits;
    for (int e = static_cast<int>(threadIdx.x); e < n_expert; e += static_cast<int>(blockDim.x)) s_logits[e] = shared_logits[e];
    __syncthreads();
    if (threadIdx.x == 0) *counter = 0;  // ready for the next step (every block has counted)
    if (threadIdx.x < static_cast<unsigned>(vendor::kWarpSize)) {
        route_plan_one_token(s_logits, n_expert, k, normalize, ids, weights, sorted, tiles, n_tiles, expert_begin,
                             expert_end);
    }
}

}  // namespace

namespace {
MoePlan single_token_plan(int64_t k, int scratch_slot, GpuContext& ctx) {
    MoePlan plan;
    plan.tile_columns = kGpuMatmulColumns;
    plan.max_tile_pairs = 1;
    plan.n_pairs = k;
    plan.max_tiles = k;
    plan.sorted = static_cast<int32_t*>(ctx.scratch(scratch_slot, static_cast<uint64_t>(k) * sizeof(int32_t)));
    plan.tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 1, static_cast<uint64_t>(k) * 3 * sizeof(int32_t)));
    plan.n_tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 2, sizeof(int32_t)));
    return plan;
}
}  // namespace

MoePlan gpu_moe_router_route_plan_single(const DeviceWeight& router, const float* h, float* logits, int64_t k,
                                         bool normalize, int32_t* ids, float* weights, int scratch_slot,
                                         unsigned* counter, GpuContext& ctx, int64_t expert_begin, int64_t expert_end) {
    const int64_t n_expert = router.ne[1];
    STRATA_CHECK(k > 0 && k <= n_expert && n_expert <= kMaxExperts, "gpu_moe_router_route_plan_single: need 0 < k <= n_expert <= 4096");
    STRATA_CHECK(router.ne[0] % 32 == 0 && router.ne[2] * router.ne[3] == 1 && gpu_supports_type(router.type),
                 "gpu_moe_router_route_plan_single: a router matrix the GPU kernels read");
    MoePlan plan = single_token_plan(k, scratch_slot, ctx);
    const int rows_per_block = std::max(1, kRouterBlock / ctx.warp_size());
    const unsigned blocks = grid_for(n_expert, rows_per_block);
    dispatch_weight_type(router.type, [&](auto tag) {
        launch_chained(ctx, router_route_plan_kernel<decltype(tag)::value>, blocks, kRouterBlock, 0, router.data,
                       router.row_bytes, router.ne[0], static_cast<int>(n_expert), h, logits, static_cast<int>(k),
                       normalize, ids, weights, plan.sorted, plan.tiles, plan.n_tiles, counter,
                       static_cast<int>(expert_begin), static_cast<int>(std::min<int64_t>(expert_end, INT_MAX)));
    });
    return plan;
}

MoePlan gpu_moe_route_plan_single(const float* logits, int64_t n_expert, int64_t k, bool normalize, int32_t* ids,
                                  float* weights, int scratch_slot, GpuContext& ctx) {
    STRATA_CHECK(k > 0 && k <= n_expert && n_expert <= kMaxExperts, "gpu_moe_route_plan_single: need 0 < k <= n_expert <= 4096");
    MoePlan plan = single_token_plan(k, scratch_slot, ctx);
    launch_chained(ctx, route_plan_single_kernel, 1, static_cast<unsigned>(ctx.warp_size()), 0, logits,
                   static_cast<int>(n_expert), static_cast<int>(k), normalize, ids, weights, plan.sorted, plan.tiles,
                   plan.n_tiles);
    return plan;
}

}  // namespace strata::gpu
