#pragma once
// The one place that picks the GPU vendor. Kernel and runtime files include this header and use
// strata::gpu::vendor::* (typed wrappers with identical names in cuda.h and hip.h), never the
// vendor API itself, so one source compiles as CUDA (nvcc) and as HIP (clang -x hip).
//
//   vendor::Stream s;
//   STRATA_GPU_CHECK(vendor::stream_create(&s));
//   STRATA_GPU_CHECK(vendor::copy_h2d_async(dst, src, bytes, s));
//   const int lanes = vendor::kWarpSize;   // device code only: 32 or 64 per target

#if defined(__HIP__) || defined(__HIPCC__) || defined(STRATA_GPU_HIP)
#include "backend/gpu/vendor/hip.h"
#else
#include "backend/gpu/vendor/cuda.h"
#endif

#include "core/check.h"

namespace strata::gpu::detail {
// A runtime call failed where failure means a broken device or a bug (launches, copies between
// buffers we own): abort with the runtime's words and the call site.
[[noreturn]] void runtime_failed(const char* file, int line, const char* call, const char* message);
}  // namespace strata::gpu::detail

#define STRATA_GPU_CHECK(call)                                                                          \
    do {                                                                                                \
        const ::strata::gpu::vendor::Error strata_gpu_err_ = (call);                                    \
        if (!::strata::gpu::vendor::ok(strata_gpu_err_))                                                \
            ::strata::gpu::detail::runtime_failed(__FILE__, __LINE__, #call,                            \
                                                  ::strata::gpu::vendor::error_string(strata_gpu_err_)); \
    } while (0)
