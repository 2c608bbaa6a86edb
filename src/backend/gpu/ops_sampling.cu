// The sampler's reduction on the device (gpu_sampling.h): one block walks the row of logits a few
// times — a row is 152k floats that the output head has just written, mostly still in L2, so
// one block reads it in microseconds, and one block needs no second launch or grid-wide sync.
// CPU reference: select_candidates in runtime/select_candidates.cpp.
#include <climits>
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {
namespace {

constexpr int kSelectBlock = 1024;

// backend/logit_candidates.h's penalized_logit with every rounding spelled out: the compiler may
// not fuse the multiply-add the host computes in two steps.
__device__ float penalize(float logit, int32_t count, const GpuSelectParams& p) {
    const float l = logit > 0 ? __fdiv_rn(logit, p.repetition) : __fmul_rn(logit, p.repetition);
    return __fsub_rn(l, __fadd_rn(__fmul_rn(static_cast<float>(count), p.frequency), p.presence));
}

// Sum of a double per thread over the block, in a fixed order (the same bits every run).
__device__ double block_sum_fixed(double v, double* shared) {
    const int tid = static_cast<int>(threadIdx.x);
    shared[tid] = v;
    __syncthreads();
    for (int half = static_cast<int>(blockDim.x) / 2; half > 0; half /= 2) {
        if (tid < half) shared[tid] += shared[tid + half];
        __syncthreads();
    }
    const double total = shared[0];
    __syncthreads();
    return total;
}

__global__ void __launch_bounds__(kSelectBlock)
select_candidates_kernel(float* logits, int n, GpuSelectParams p, const int32_t* penalized, float* saved,
                         GpuCandidateHeader* header, LogitCandidate* out) {
    vendor::wait_for_previous_kernel();
    __shared__ float reduce[kMaxWarpsPerBlock];
    __shared__ double sums[kSelectBlock];
    __shared__ double warp_bands[kMaxWarpsPerBlock][kMassBands];
    __shared__ double bands[kMassBands];
    __shared__ int first, count;
    __shared__ float floor_shared;
    const int tid = static_cast<int>(threadIdx.x), stride = static_cast<int>(blockDim.x);
    const int lane = tid % vendor::kWarpSize, warp = tid / vendor::kWarpSize;
    const int n_warps = (stride + vendor::kWarpSize - 1) / vendor::kWarpSize;

    for (int i = tid; i < p.n_penalized; i += stride) {
        const int32_t id = penalized[i];
        saved[i] = logits[id];
        logits[id] = penalize(saved[i], penalized[p.n_penalized + i], p);
    }
    __syncthreads();  // the block's global writes are visible to the block after the barrier

    // The largest logit (NaNs passed over, as the host's max_of), unless top-k does without it.
    float top = 0.0f;
    if (p.temperature == 0.0f || p.top_k == 0) {
        float m = -INFINITY;
        for (int i = tid; i < n; i += stride) m = fmaxf(m, logits[i]);
        top = block_max(m, reduce);
    }
    float floor = -INFINITY;
    double sum = 0.0;
    if (p.temperature == 0.0f) {
        // Greedy: the first index holding the maximum (0 when every logit is NaN).
        if (tid == 0) first = INT_MAX;
        __syncthreads();
        for (int i = tid; i < n; i += stride) {
            if (logits[i] == top) {
                atomicMin(&first, i);
                break;  // this thread's later hits have larger indices
            }
        }
        __syncthreads();
        if (tid == 0) {
            const int id = first == INT_MAX ? 0 : first;
            out[0] = LogitCandidate{id, logits[id]};
            header->count = 1;
        }
    } else {
        if (p.top_k > 0) {
            // The smallest of k chunks' maxima: at least k logits are at or above it.
            const int chunk = n / p.top_k;
            float smallest = INFINITY;
            for (int c = warp; c < p.top_k; c += n_warps) {
                float m = -INFINITY;
                for (int j = lane; j < chunk; j += vendor::kWarpSize) m = fmaxf(m, logits[c * chunk + j]);
                smallest = fminf(smallest, warp_max(m));
            }
            floor = -block_max(-smallest, reduce);
        } else {
            // The mass below the top in bands (per warp, then summed), and the floors it gives.
            for (int b = lane; b < kMassBands; b += vendor::kWarpSize) warp_bands[warp][b] = 0.0;
            __syncthreads();
            for (int i = tid; i < n; i += stride) {
                const float l = logits[i];
                const float e = expf((l - top) / p.temperature);
                sum += e;
                atomicAdd(&warp_bands[warp][mass_band(top, l, p.temperature)], static_cast<double>(e));
            }
            sum = block_sum_fixed(sum, sums);
            for (int b = tid; b < kMassBands; b += stride) {
                double total = 0.0;
                for (int w = 0; w < n_warps; ++w) total += warp_bands[w][b];
                bands[b] = total;
            }
            __syncthreads();
            if (tid == 0) {
                float f = -INFINITY;
                if (p.top_p < 1.0f) f = top_p_floor(bands, sum, top, p.temperature, p.top_p);
                if (p.min_p > 0.0f) f = fmaxf(f, min_p_floor(top, p.temperature, p.min_p));
                floor_shared = f;
            }
            __syncthreads();
            floor = floor_shared;
        }
        if (tid == 0) count = 0;
        __syncthreads();
        for (int i = tid; i < n; i += stride) {
            const float l = logits[i];
            if (l >= floor) out[atomicAdd(&count, 1)] = LogitCandidate{i, l};
        }
        __syncthreads();
        if (tid == 0) header->count = count;
    }
    if (tid == 0) {
        header->top_k = p.top_k;
        header->top = top;
        header->sum = sum;
    }
    __syncthreads();  // every read of the penalized logits is done
    for (int i = tid; i < p.n_penalized; i += stride) logits[penalized[i]] = saved[i];
}

}  // namespace

void gpu_select_candidates(float* logits, int64_t n_vocab, const GpuSelectParams& params, const int32_t* penalized,
                           float* saved, GpuCandidateHeader* header, LogitCandidate* out, GpuContext& ctx) {
    STRATA_CHECK(n_vocab > 0 && n_vocab < INT_MAX, "gpu_select_candidates: a vocabulary of 1 to 2^31 - 2 tokens");
    launch_chained(ctx, select_candidates_kernel, 1, kSelectBlock, 0, logits, static_cast<int>(n_vocab), params,
                   penalized, saved, header, out);
    STRATA_GPU_LAUNCHED();
}

}  // namespace strata::gpu
