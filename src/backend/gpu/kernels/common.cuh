#pragma once
// Device helpers shared by the kernel files: warp and block reductions written against the
// vendor layer's warp size (32 or 64, a device-side constant), and the launch check.
//
//   const float total = block_sum(partial, shared);   // every thread gets the block's sum
//   STRATA_GPU_LAUNCHED();                            // after each <<<...>>>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

inline vendor::Stream stream_of(const GpuContext& ctx) { return static_cast<vendor::Stream>(ctx.stream()); }

// Largest block any kernel here launches, and the most warps it can hold (warp size ≥ 32).
constexpr int kMaxBlock = 1024;
constexpr int kMaxWarpsPerBlock = kMaxBlock / 32;

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = vendor::kWarpSize / 2; offset > 0; offset /= 2) v += vendor::shfl_xor(v, offset);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int offset = vendor::kWarpSize / 2; offset > 0; offset /= 2) v = fmaxf(v, vendor::shfl_xor(v, offset));
    return v;
}

// Sum over the block; every thread gets the result. `shared` holds kMaxWarpsPerBlock floats and
// may be reused once every thread has returned (the trailing barrier guarantees it).
__device__ __forceinline__ float block_sum(float v, float* shared) {
    const int lane = threadIdx.x % vendor::kWarpSize, warp = threadIdx.x / vendor::kWarpSize;
    const int n_warps = (blockDim.x + vendor::kWarpSize - 1) / vendor::kWarpSize;
    v = warp_sum(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < n_warps; ++w) total += shared[w];  // same order in every thread
    __syncthreads();
    return total;
}
__device__ __forceinline__ float block_max(float v, float* shared) {
    const int lane = threadIdx.x % vendor::kWarpSize, warp = threadIdx.x / vendor::kWarpSize;
    const int n_warps = (blockDim.x + vendor::kWarpSize - 1) / vendor::kWarpSize;
    v = warp_max(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float best = shared[0];
    for (int w = 1; w < n_warps; ++w) best = fmaxf(best, shared[w]);
    __syncthreads();
    return best;
}

inline unsigned grid_for(int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

}  // namespace strata::gpu

// A launch error (bad configuration, no kernel image for this device) is a bug or a build that
// lacks this GPU's architecture: abort with the runtime's words.
#define STRATA_GPU_LAUNCHED() STRATA_GPU_CHECK(::strata::gpu::vendor::last_error())
