#pragma once
// Device helpers shared by the kernel files: warp and block reductions written against the
// vendor layer's warp size (32 or 64, a device-side constant), the chained launch and the launch
// check.
//
//   const float total = block_sum(partial, shared);   // every thread gets the block's sum
//   launch_chained(ctx, my_kernel, grid, block, 0, x, n);  // my_kernel starts with the wait
//   STRATA_GPU_LAUNCHED();                            // after each <<<...>>>

#include <utility>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

inline vendor::Stream stream_of(const GpuContext& ctx) { return static_cast<vendor::Stream>(ctx.stream()); }

// Largest block any kernel here launches, and the most warps it can hold (warp size ≥ 32).
constexpr int kMaxBlock = 1024;
constexpr int kMaxWarpsPerBlock = kMaxBlock / 32;

// The reductions, written against `lanes` (here the vendor layer; a CPU test includes the same
// fragment against an emulated 64-wide wavefront, the gfx906 path no machine here can run).
namespace lanes = vendor;
#include "backend/gpu/kernels/reductions.inc"

inline unsigned grid_for(int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// kernel<<<grid, block, smem>>>(args...) on the context's stream, chained to the kernel before it
// where the context allows (GpuContext::chained_launches): it may then be scheduled while that
// kernel drains, so `kernel` must begin with vendor::wait_for_previous_kernel(), before any
// global memory access, in every block (vendor/cuda.h says why). A failed launch aborts.
template <typename... Params, typename... Args>
void launch_chained(const GpuContext& ctx, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                    Args&&... args) {
    if (ctx.launches_muted()) return;
    STRATA_GPU_CHECK(vendor::launch_chained(kernel, grid, block, smem, stream_of(ctx), ctx.chained_launches(),
                                            std::forward<Args>(args)...));
}

}  // namespace strata::gpu

// A launch error (bad configuration, no kernel image for this device) is a bug or a build that
// lacks this GPU's architecture: abort with the runtime's words.
#define STRATA_GPU_LAUNCHED() STRATA_GPU_CHECK(::strata::gpu::vendor::last_error())
