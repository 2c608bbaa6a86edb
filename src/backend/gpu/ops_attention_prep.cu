// gpu_qk_norm_rope_store (gpu_ops.h): the per-head work between the q/k/v projections and
// attention in one launch instead of five (two norms, two ropes, the cache store), which at
// decode are each a few microseconds of launch for nanoseconds of work. One block per (head,
// token): query heads first, then key heads; a head is held in shared memory between steps.
// The arithmetic is that of rms_norm_kernel and rope_kernel (ops_elementwise.cu), in the same
// order, so the fused and the separate ops agree bit for bit.
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/kv_access.cuh"
#include "backend/gpu/kernels/rope.cuh"

namespace strata::gpu {

namespace {

constexpr int kPrepBlock = 128;  // a typical head dimension: one element per thread

constexpr int kPrepPer = kGpuMaxHeadDim / kPrepBlock;  // elements of a head per thread, at most

template <typename KV>
__global__ void qk_norm_rope_store_kernel(float* q, const float* k, const float* v, int64_t n_head, int64_t n_head_kv,
                                          int64_t head_dim_v, const float* q_norm, const float* k_norm, float eps,
                                          GpuRope rope, const int32_t* positions, KV* keys, KV* values) {
    vendor::wait_for_previous_kernel();
    __shared__ float head[kGpuMaxHeadDim];
    __shared__ float reduce[kMaxWarpsPerBlock];
    const int64_t t = blockIdx.y;
    const bool is_query = static_cast<int64_t>(blockIdx.x) < n_head;
    const int64_t h = is_query ? blockIdx.x : blockIdx.x - n_head;
    const int64_t dim = rope.head_dim;
    const float* src = is_query ? q + (t * n_head + h) * dim : k + (t * n_head_kv + h) * dim;
    const float* weight = is_query ? q_norm : k_norm;
    const float* v_src = is_query ? nullptr : v + (t * n_head_kv + h) * head_dim_v;

    // Every load first (the head, its norm weight, a key head's values, the position), and the
    // pair angles (double) while they are in flight: at decode this kernel is a chain of waits.
    float x[kPrepPer], w[kPrepPer], val[kPrepPer];
#pragma unroll
    for (int r = 0; r < kPrepPer; ++r) {
        const int64_t i = threadIdx.x + static_cast<int64_t>(r) * blockDim.x;
        x[r] = i < dim ? src[i] : 0.0f;
        w[r] = i < dim && weight ? weight[i] : 1.0f;
        val[r] = v_src && i < head_dim_v ? v_src[i] : 0.0f;
    }
    const int32_t pos = positions[t];
    const int64_t half = rope.rope_dims / 2;
    float c[kPrepPer], s[kPrepPer];
#pragma unroll
    for (int r = 0; r < kPrepPer; ++r) {
        const int64_t i = threadIdx.x + static_cast<int64_t>(r) * blockDim.x;
        if (i < half) rope_cos_sin(rope, pos, i, c[r], s[r]);
    }

    float sum = 0.0f;
#pragma unroll
    for (int r = 0; r < kPrepPer; ++r) sum += x[r] * x[r];  // zeros past the head add nothing
    if (weight) {  // the same for the whole block, so block_sum's barriers are reached by all
        const float scale = rsqrtf(block_sum(sum, reduce) / static_cast<float>(dim) + eps);
#pragma unroll
        for (int r = 0; r < kPrepPer; ++r) x[r] = x[r] * scale * w[r];
    }
#pragma unroll
    for (int r = 0; r < kPrepPer; ++r) {
        const int64_t i = threadIdx.x + static_cast<int64_t>(r) * blockDim.x;
        if (i < dim) head[i] = x[r];
    }
    __syncthreads();

#pragma unroll
    for (int r = 0; r < kPrepPer; ++r) {  // pairs are disjoint: no races
        const int64_t i = threadIdx.x + static_cast<int64_t>(r) * blockDim.x;
        if (i >= half) continue;
        const int64_t a = rope.neox ? i : 2 * i, b = rope.neox ? i + half : 2 * i + 1;
        const float x0 = head[a], x1 = head[b];
        head[a] = x0 * c[r] - x1 * s[r];
        head[b] = x0 * s[r] + x1 * c[r];
    }
    __syncthreads();

    if (is_query) {
        float* dst = q + (t * n_head + h) * dim;  // in place: src was read before the barriers
        for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = head[i];
        return;
    }
    KV* key_row = keys + static_cast<int64_t>(pos) * (n_head_kv * dim) + h * dim;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) store_kv(key_row, i, head[i]);
    KV* value_row = values + static_cast<int64_t>(pos) * (n_head_kv * head_dim_v) + h * head_dim_v;
#pragma unroll
    for (int r = 0; r < kPrepPer; ++r) {
        const int64_t i = threadIdx.x + static_cast<int64_t>(r) * blockDim.x;
        if (i < head_dim_v) store_kv(value_row, i, val[r]);
    }
}

}  // namespace

void gpu_qk_norm_rope_store(float* q, const float* k, const float* v, int64_t n_tokens, int64_t n_head,
                            const float* q_norm, const float* k_norm, float eps, const GpuRope& rope,
                            const int32_t* positions, GpuKvCache& kv, int64_t layer, GpuContext& ctx) {
    STRATA_CHECK(rope.head_dim > 0 && rope.head_dim <= kGpuMaxHeadDim && kv.k_dim() % rope.head_dim == 0,
                 "gpu_qk_norm_rope_store: head_dim must divide the key rows and be at most kGpuMaxHeadDim");
    STRATA_CHECK(rope.rope_dims % 2 == 0 && rope.rope_dims <= rope.head_dim,
                 "gpu_qk_norm_rope_store: rope_dims must be even and at most head_dim");
    const int64_t n_head_kv = kv.k_dim() / rope.head_dim;
    STRATA_CHECK(kv.v_dim() % n_head_kv == 0, "gpu_qk_norm_rope_store: value rows do not split into the key heads");
    STRATA_CHECK(kv.v_dim() / n_head_kv <= kGpuMaxHeadDim, "gpu_qk_norm_rope_store: value heads longer than kGpuMaxHeadDim");
    STRATA_CHECK(n_tokens <= 65535, "gpu_qk_norm_rope_store: too many tokens for one launch");
    if (n_tokens == 0) return;
    const dim3 grid(static_cast<unsigned>(n_head + n_head_kv), static_cast<unsigned>(n_tokens));
    const int64_t head_dim_v = kv.v_dim() / n_head_kv;
    if (kv.type() == KvCacheType::F16) {
        launch_chained(ctx, qk_norm_rope_store_kernel<uint16_t>, grid, kPrepBlock, 0, q, k, v, n_head, n_head_kv,
                       head_dim_v, q_norm, k_norm, eps, rope, positions, static_cast<uint16_t*>(kv.keys(layer)),
                       static_cast<uint16_t*>(kv.values(layer)));
    } else {
        launch_chained(ctx, qk_norm_rope_store_kernel<float>, grid, kPrepBlock, 0, q, k, v, n_head, n_head_kv,
                       head_dim_v, q_norm, k_norm, eps, rope, positions, static_cast<float*>(kv.keys(layer)),
                       static_cast<float*>(kv.values(layer)));
    }
}

}  // namespace strata::gpu
