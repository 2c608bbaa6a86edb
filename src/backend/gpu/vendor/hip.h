#pragma once
// HIP side of the vendor layer (see vendor/runtime.h), name for name the same as vendor/cuda.h.
// Written against HIP 5.2 (Debian) and newer: __shfl_xor without a mask, sdot4/sudot4 builtins
// chosen per device pass (docs/AMD_BUILD.md).

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace strata::gpu::vendor {

using Error = hipError_t;
using Stream = hipStream_t;
using Event = hipEvent_t;
using Graph = hipGraph_t;
using GraphExec = hipGraphExec_t;
inline constexpr const char* kRuntimeName = "HIP";
// The collective library of a tensor split (gpu_collective.cpp), loaded at run time: same C API
// for NCCL and RCCL; STRATA_NCCL_LIBRARY names another file.
inline constexpr const char* kCollectiveName = "RCCL";
inline constexpr const char* kCollectiveLibraries[] = {"librccl.so.1", "librccl.so"};

inline bool ok(Error e) { return e == hipSuccess; }
inline const char* error_string(Error e) { return hipGetErrorString(e); }
inline Error last_error() { return hipGetLastError(); }

inline Error device_count(int* n) { return hipGetDeviceCount(n); }
inline Error set_device(int ordinal) { return hipSetDevice(ordinal); }
inline Error memory_info(size_t* free_bytes, size_t* total_bytes) { return hipMemGetInfo(free_bytes, total_bytes); }

struct DeviceProps {
    std::string name;
    std::string arch;  // "gfx1100" (feature flags such as ":xnack-" stripped)
    uint64_t total_bytes = 0;
    int warp_size = 0;
    int multiprocessors = 0;
};
inline Error device_props(int ordinal, DeviceProps* out) {
    hipDeviceProp_t p{};
    const Error e = hipGetDeviceProperties(&p, ordinal);
    if (e != hipSuccess) return e;
    out->name = p.name;
    out->arch = p.gcnArchName;
    if (const auto colon = out->arch.find(':'); colon != std::string::npos) out->arch.resize(colon);
    out->total_bytes = p.totalGlobalMem;
    out->warp_size = p.warpSize;
    out->multiprocessors = p.multiProcessorCount;
    return e;
}

inline Error malloc_device(void** ptr, size_t bytes) { return hipMalloc(ptr, bytes); }
inline Error free_device(void* ptr) { return hipFree(ptr); }
inline Error malloc_pinned(void** ptr, size_t bytes) { return hipHostMalloc(ptr, bytes, hipHostMallocDefault); }
inline Error free_pinned(void* ptr) { return hipHostFree(ptr); }
// The address kernels use for page-locked host memory (hipHostMalloc maps it).
inline Error host_device_pointer(void* host, void** device) { return hipHostGetDevicePointer(device, host, 0); }

inline Error copy_h2d_async(void* dst, const void* src, size_t bytes, Stream s) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyHostToDevice, s);
}
inline Error copy_d2h_async(void* dst, const void* src, size_t bytes, Stream s) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToHost, s);
}
inline Error copy_d2d_async(void* dst, const void* src, size_t bytes, Stream s) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, s);
}
inline Error memset_async(void* dst, int value, size_t bytes, Stream s) { return hipMemsetAsync(dst, value, bytes, s); }
inline Error copy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t bytes, Stream s) {
    return hipMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, s);
}
inline Error can_access_peer(int* can, int device, int peer) { return hipDeviceCanAccessPeer(can, device, peer); }
inline Error enable_peer_access(int peer) {
    const Error e = hipDeviceEnablePeerAccess(peer, 0);
    if (e == hipErrorPeerAccessAlreadyEnabled) {
        static_cast<void>(hipGetLastError());
        return hipSuccess;
    }
    return e;
}
// Several host → device copies (HIP has no batch entry point: one call each).
inline Error copy_h2d_batch_async(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, Stream s) {
    for (size_t i = 0; i < count; ++i) {
        const Error e = hipMemcpyAsync(dsts[i], srcs[i], sizes[i], hipMemcpyHostToDevice, s);
        if (e != hipSuccess) return e;
    }
    return hipSuccess;
}

inline Error stream_create(Stream* s) { return hipStreamCreateWithFlags(s, hipStreamNonBlocking); }
inline Error stream_destroy(Stream s) { return hipStreamDestroy(s); }
inline Error stream_synchronize(Stream s) { return hipStreamSynchronize(s); }

inline Error event_create(Event* e) { return hipEventCreate(e); }
inline Error event_destroy(Event e) { return hipEventDestroy(e); }
inline Error event_record(Event e, Stream s) { return hipEventRecord(e, s); }
inline Error event_synchronize(Event e) { return hipEventSynchronize(e); }
inline Error event_elapsed_ms(float* ms, Event start, Event end) { return hipEventElapsedTime(ms, start, end); }
inline Error event_query(Event e) { return hipEventQuery(e); }
inline bool event_pending(Error e) { return e == hipErrorNotReady; }
inline Error stream_wait_event(Stream s, Event e) { return hipStreamWaitEvent(s, e, 0); }

// Stream capture into a graph, replayed as one launch (hipGraph* mirrors cudaGraph*).
inline Error stream_begin_capture(Stream s) { return hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed); }
inline Error stream_end_capture(Stream s, Graph* g) { return hipStreamEndCapture(s, g); }
inline Error graph_instantiate(GraphExec* exec, Graph g) { return hipGraphInstantiateWithFlags(exec, g, 0); }
inline Error graph_launch(GraphExec exec, Stream s) { return hipGraphLaunch(exec, s); }
inline Error graph_destroy(Graph g) { return hipGraphDestroy(g); }
inline Error graph_exec_destroy(GraphExec exec) { return hipGraphExecDestroy(exec); }

// Page-locks existing host memory so async copies from it run at full link speed. HIP has no
// read-only flag: a read-only file mapping may be refused, and the caller then stages copies.
inline Error host_register(void* ptr, size_t bytes, bool /*read_only*/) {
    return hipHostRegister(ptr, bytes, hipHostRegisterPortable);
}
inline Error host_unregister(void* ptr) { return hipHostUnregister(ptr); }

// ---- chained launches --------------------------------------------------------------------------
// HIP has no programmatic dependent launch: kernels are never chained, and launch_chained is a
// plain launch.
inline Error chained_launch_compiled(const void* /*kernel*/, bool* compiled) {
    *compiled = false;
    return hipSuccess;
}

template <typename... Params, typename... Args>
Error launch_chained(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, Stream s, bool /*chained*/,
                     Args&&... args) {
    kernel<<<grid, block, smem, s>>>(std::forward<Args>(args)...);
    return hipGetLastError();
}

// ---- device side ------------------------------------------------------------------------------
// 64 on GCN (gfx906), 32 on RDNA, per device pass. The host pass sees 64 whatever the target, so
// this is for kernel bodies only; launch sizes on the host come from DeviceProps::warp_size.
#if defined(__AMDGCN_WAVEFRONT_SIZE__)
inline constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE__;
#else
inline constexpr int kWarpSize = 64;
#endif

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) { return __shfl_xor(v, lane_mask); }
__device__ __forceinline__ int shfl_xor(int v, int lane_mask) { return __shfl_xor(v, lane_mask); }

// c + Σ a.byte[i] · b.byte[i] over four signed bytes: v_dot4_i32_i8 on gfx906/gfx1030,
// v_dot4_i32_iu8 (both operands signed) on gfx11/gfx12, plain multiplies elsewhere.
__device__ __forceinline__ int dot4_i8(int a, int b, int c) {
#if defined(__gfx906__) || defined(__gfx1030__)
    return __builtin_amdgcn_sdot4(a, b, c, false);
#elif defined(__GFX11__) || defined(__GFX12__)
    return __builtin_amdgcn_sudot4(true, a, true, b, c, false);
#else
    for (int i = 0; i < 4; ++i) {
        c += static_cast<int8_t>(a >> (8 * i)) * static_cast<int8_t>(b >> (8 * i));
    }
    return c;
#endif
}
__device__ __forceinline__ float half_bits_to_float(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint16_t float_to_half_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
// Ends the kernel with an error the host's next runtime call reports (a bug, not bad input).
__device__ __forceinline__ void trap() { __builtin_trap(); }

// Nothing to wait for: kernels of a stream run one after the other (see vendor/cuda.h).
__device__ __forceinline__ void wait_for_previous_kernel() {}

// ---- kernel images ----------------------------------------------------------------------------
// No PTX on HIP: the paths that ask (CUDA tensor-core kernels) are never taken.
inline Error kernel_ptx_version(const void* /*kernel*/, int* version) {
    *version = 0;
    return hipSuccess;
}

}  // namespace strata::gpu::vendor
