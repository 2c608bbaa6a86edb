#pragma once
// CUDA side of the vendor layer (see vendor/runtime.h): thin typed wrappers of the runtime API and
// the few device intrinsics kernels need. vendor/hip.h defines the same names for HIP.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace strata::gpu::vendor {

using Error = cudaError_t;
using Stream = cudaStream_t;
using Event = cudaEvent_t;
using Graph = cudaGraph_t;
using GraphExec = cudaGraphExec_t;
inline constexpr const char* kRuntimeName = "CUDA";
// The collective library of a tensor split (gpu_collective.cpp), loaded at run time: same C API
// for NCCL and RCCL; STRATA_NCCL_LIBRARY names another file.
inline constexpr const char* kCollectiveName = "NCCL";
inline constexpr const char* kCollectiveLibraries[] = {"libnccl.so.2", "libnccl.so"};

inline bool ok(Error e) { return e == cudaSuccess; }
inline const char* error_string(Error e) { return cudaGetErrorString(e); }
inline Error last_error() { return cudaGetLastError(); }

inline Error device_count(int* n) { return cudaGetDeviceCount(n); }
inline Error set_device(int ordinal) { return cudaSetDevice(ordinal); }
inline Error memory_info(size_t* free_bytes, size_t* total_bytes) { return cudaMemGetInfo(free_bytes, total_bytes); }

struct DeviceProps {
    std::string name;
    std::string arch;  // "sm_90"
    uint64_t total_bytes = 0;
    int warp_size = 0;
    int multiprocessors = 0;
};
inline Error device_props(int ordinal, DeviceProps* out) {
    cudaDeviceProp p{};
    const Error e = cudaGetDeviceProperties(&p, ordinal);
    if (e != cudaSuccess) return e;
    out->name = p.name;
    out->arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
    out->total_bytes = p.totalGlobalMem;
    out->warp_size = p.warpSize;
    out->multiprocessors = p.multiProcessorCount;
    return e;
}

inline Error malloc_device(void** ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
inline Error free_device(void* ptr) { return cudaFree(ptr); }
inline Error malloc_pinned(void** ptr, size_t bytes) { return cudaMallocHost(ptr, bytes); }
inline Error free_pinned(void* ptr) { return cudaFreeHost(ptr); }
// The address kernels use for page-locked host memory (mapped; the same pointer under UVA).
inline Error host_device_pointer(void* host, void** device) { return cudaHostGetDevicePointer(device, host, 0); }

inline Error copy_h2d_async(void* dst, const void* src, size_t bytes, Stream s) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
}
inline Error copy_d2h_async(void* dst, const void* src, size_t bytes, Stream s) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s);
}
inline Error copy_d2d_async(void* dst, const void* src, size_t bytes, Stream s) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s);
}
inline Error memset_async(void* dst, int value, size_t bytes, Stream s) { return cudaMemsetAsync(dst, value, bytes, s); }
// Device → device across GPUs: direct when peer access is enabled, else staged by the runtime.
inline Error copy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t bytes, Stream s) {
    return cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, s);
}
inline Error can_access_peer(int* can, int device, int peer) { return cudaDeviceCanAccessPeer(can, device, peer); }
// From the current device; enabling twice is not an error.
inline Error enable_peer_access(int peer) {
    const Error e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        static_cast<void>(cudaGetLastError());
        return cudaSuccess;
    }
    return e;
}
// Several host → device copies in one call (one driver entry instead of one per copy); the
// copies may run in any order among themselves, in stream order as a whole.
inline Error copy_h2d_batch_async(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, Stream s) {
#if CUDART_VERSION >= 12080
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t first = 0;
    return cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &first, 1, s);
#else
    for (size_t i = 0; i < count; ++i) {
        const Error e = cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyHostToDevice, s);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
#endif
}

inline Error stream_create(Stream* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
inline Error stream_destroy(Stream s) { return cudaStreamDestroy(s); }
inline Error stream_synchronize(Stream s) { return cudaStreamSynchronize(s); }

inline Error event_create(Event* e) { return cudaEventCreate(e); }
inline Error event_destroy(Event e) { return cudaEventDestroy(e); }
inline Error event_record(Event e, Stream s) { return cudaEventRecord(e, s); }
inline Error event_synchronize(Event e) { return cudaEventSynchronize(e); }
inline Error event_elapsed_ms(float* ms, Event start, Event end) { return cudaEventElapsedTime(ms, start, end); }
inline Error event_query(Event e) { return cudaEventQuery(e); }
inline bool event_pending(Error e) { return e == cudaErrorNotReady; }
inline Error stream_wait_event(Stream s, Event e) { return cudaStreamWaitEvent(s, e, 0); }

// Stream capture into a graph, replayed as one launch. Relaxed mode: calls of other threads (and
// allocations) do not invalidate the capture; the caller keeps its own stream free of them.
inline Error stream_begin_capture(Stream s) { return cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed); }
inline Error stream_end_capture(Stream s, Graph* g) { return cudaStreamEndCapture(s, g); }
inline Error graph_instantiate(GraphExec* exec, Graph g) { return cudaGraphInstantiateWithFlags(exec, g, 0); }
inline Error graph_launch(GraphExec exec, Stream s) { return cudaGraphLaunch(exec, s); }
inline Error graph_destroy(Graph g) { return cudaGraphDestroy(g); }
inline Error graph_exec_destroy(GraphExec exec) { return cudaGraphExecDestroy(exec); }

// Page-locks existing host memory (a read-only file mapping too) so async copies from it run at
// full link speed without a staging copy.
inline Error host_register(void* ptr, size_t bytes, bool read_only) {
    return cudaHostRegister(ptr, bytes, cudaHostRegisterPortable | (read_only ? cudaHostRegisterReadOnly : 0u));
}
inline Error host_unregister(void* ptr) { return cudaHostUnregister(ptr); }

// ---- chained launches (Programmatic Dependent Launch, sm_90+) -------------------------------
// A chained kernel may be scheduled while the kernel before it in the stream still drains its last
// blocks, which hides the launch gap between the small kernels of a decode step. In exchange its
// first statement is wait_for_previous_kernel(), before any global read or write: the previous
// kernel may still be reading what this one writes. Nothing here triggers early
// (griddepcontrol.launch_dependents): the next kernel is released as this one's blocks end. Both
// refinements measured slower on an H200 (synthetic Qwen3-30B-A3B, tg128 in one run each: 327
// tok/s as here, 315 with a trigger after each block's wait plus decode weights read before it,
// 202 with the trigger before the wait; 324 as here against 286 with the weight reads alone). The
// wait returns once the previous kernel has finished and its writes are visible; as every chained
// kernel waits before it can finish, a chain is ordered as a plain stream would be. Copies, and
// kernels launched with <<<...>>>, keep the full ordering of the stream.

// Whether `kernel`, as loaded for the current device, was compiled for sm_90 or newer, so that its
// wait_for_previous_kernel() is the real wait: a build for older targets runs on an H100 through
// its PTX, where the wait compiled to nothing and chaining would race.
inline Error chained_launch_compiled(const void* kernel, bool* compiled) {
    cudaFuncAttributes a{};
    const Error e = cudaFuncGetAttributes(&a, kernel);
    *compiled = e == cudaSuccess && a.ptxVersion >= 90;
    return e;
}

// kernel<<<grid, block, smem, s>>>(args...), chained to the kernel before it when `chained`. The
// arguments convert to the kernel's parameter types as they would in a <<<...>>> call.
template <typename... Params, typename... Args>
Error launch_chained(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, Stream s, bool chained,
                     Args&&... args) {
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = s;
    config.attrs = &attr;
    config.numAttrs = chained ? 1 : 0;
    return [&](Params... converted) {
        void* pointers[sizeof...(Params) + 1] = {&converted...};  // + 1: a kernel without parameters
        return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(kernel), pointers);
    }(std::forward<Args>(args)...);
}

// ---- device side ------------------------------------------------------------------------------
#if defined(__CUDACC__)
// Threads per warp as the kernel being compiled sees it. Device code only: launch sizes on the
// host come from DeviceProps::warp_size (a HIP host pass would see 64 for every target).
inline constexpr int kWarpSize = 32;

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
__device__ __forceinline__ int shfl_xor(int v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
// c + Σ a.byte[i] · b.byte[i] over four signed bytes.
__device__ __forceinline__ int dot4_i8(int a, int b, int c) { return __dp4a(a, b, c); }
__device__ __forceinline__ float half_bits_to_float(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint16_t float_to_half_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
// Ends the kernel with an error the host's next runtime call reports (a bug, not bad input).
__device__ __forceinline__ void trap() { __trap(); }

// In a kernel queued with launch_chained, before its first access to data another kernel writes:
// returns once the kernel before this one has finished and its writes are visible (at once when
// launched plainly).
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
#endif

// ---- kernel images ----------------------------------------------------------------------------
// The virtual architecture `kernel` was compiled for, as loaded for the current device (80 for
// compute_80, 0 when the query fails). A build for older targets runs on a newer GPU through its
// PTX, where device code guarded by __CUDA_ARCH__ >= 800 is missing: paths that need it ask here.
inline Error kernel_ptx_version(const void* kernel, int* version) {
    cudaFuncAttributes a{};
    const Error e = cudaFuncGetAttributes(&a, kernel);
    *version = e == cudaSuccess ? a.ptxVersion : 0;
    return e;
}

}  // namespace strata::gpu::vendor
