// gpu_moe_route_plan_single (gpu_ops.h): routing and the expert plan of a one-token step in one
// launch. With one token the k chosen experts are distinct, so the plan is fixed in shape (k
// tiles of one pair each, pairs in slot order) and needs no counting or sorting pass: the
// routing warp writes it as it picks the experts. Routing is that of gpu_moe_route_softmax_topk
// (ops_moe.cu) step for step — the same probabilities, order and ties — so ids and weights match.
#include <climits>
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

constexpr int kMaxExperts = 4096;

__device__ __forceinline__ bool ranks_before(float p, int e, float q, int f) { return p > q || (p == q && e < f); }

// One warp. tiles[j] = (expert of slot j, sorted position j, 1 pair); sorted[j] = pair j.
__global__ void route_plan_single_kernel(const float* logits, int n_expert, int k, bool normalize, int32_t* ids,
                                         float* weights, int32_t* sorted, int32_t* tiles, int32_t* n_tiles) {
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
            tiles[3 * j] = best_e, tiles[3 * j + 1] = j, tiles[3 * j + 2] = 1;
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

}  // namespace

MoePlan gpu_moe_route_plan_single(const float* logits, int64_t n_expert, int64_t k, bool normalize, int32_t* ids,
                                  float* weights, int scratch_slot, GpuContext& ctx) {
    STRATA_CHECK(k > 0 && k <= n_expert && n_expert <= kMaxExperts, "gpu_moe_route_plan_single: need 0 < k <= n_expert <= 4096");
    MoePlan plan;
    plan.tile_columns = kGpuMatmulColumns;
    plan.max_tile_pairs = 1;
    plan.n_pairs = k;
    plan.max_tiles = k;
    plan.sorted = static_cast<int32_t*>(ctx.scratch(scratch_slot, static_cast<uint64_t>(k) * sizeof(int32_t)));
    plan.tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 1, static_cast<uint64_t>(k) * 3 * sizeof(int32_t)));
    plan.n_tiles = static_cast<int32_t*>(ctx.scratch(scratch_slot + 2, sizeof(int32_t)));
    route_plan_single_kernel<<<1, ctx.warp_size(), 0, stream_of(ctx)>>>(logits, static_cast<int>(n_expert), static_cast<int>(k),
                                                                       normalize, ids, weights, plan.sorted, plan.tiles,
                                                                       plan.n_tiles);
    STRATA_GPU_LAUNCHED();
    return plan;
}

}  // namespace strata::gpu
