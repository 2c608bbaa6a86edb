// GpuMemoryApi over the CUDA driver API (libcuda.so.1 / nvcuda.dll) through dlopen. The _v2 entry
// points are the ones cuda.h maps the plain names to since CUDA 3.2 (64-bit sizes and addresses).
#include <fmt/format.h>

#include "device/dynamic_library.h"
#include "device/gpu_memory_api.h"

namespace strata {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;
constexpr CUresult kCudaSuccess = 0;

struct CudaDriver {
    CUresult (*init)(unsigned) = nullptr;
    CUresult (*driver_version)(int*) = nullptr;
    CUresult (*device_get)(CUdevice*, int) = nullptr;
    CUresult (*primary_retain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*primary_release)(CUdevice) = nullptr;
    CUresult (*set_current)(CUcontext) = nullptr;
    CUresult (*synchronize)() = nullptr;
    CUresult (*mem_info)(size_t*, size_t*) = nullptr;
    CUresult (*alloc)(CUdeviceptr*, size_t) = nullptr;
    CUresult (*free)(CUdeviceptr) = nullptr;
    CUresult (*alloc_host)(void**, size_t) = nullptr;
    CUresult (*free_host)(void*) = nullptr;
    CUresult (*copy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
    CUresult (*copy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
    CUresult (*error_string)(CUresult, const char**) = nullptr;

    std::string describe(CUresult r) const {
        const char* text = nullptr;
        if (error_string && error_string(r, &text) == kCudaSuccess && text) return fmt::format("CUDA error {}: {}", r, text);
        return fmt::format("CUDA error {}", r);
    }
};

class CudaMemoryApi final : public GpuMemoryApi {
public:
    CudaMemoryApi(CudaDriver driver, CUdevice device, std::string description)
        : d_(driver), device_(device), description_(std::move(description)) {}
    ~CudaMemoryApi() override {
        if (d_.primary_release) d_.primary_release(device_);
    }

    std::string description() const override { return description_; }

    Result<GpuMemoryInfo> memory_info() override {
        size_t free = 0, total = 0;
        if (CUresult r = d_.mem_info(&free, &total); r != kCudaSuccess) return Status::error("cuMemGetInfo: {}", d_.describe(r));
        return GpuMemoryInfo{free, total};
    }
    Result<uint64_t> allocate(size_t bytes) override {
        CUdeviceptr p = 0;
        if (CUresult r = d_.alloc(&p, bytes); r != kCudaSuccess) return Status::error("cuMemAlloc of {} bytes: {}", bytes, d_.describe(r));
        return static_cast<uint64_t>(p);
    }
    void release(uint64_t address) override { d_.free(static_cast<CUdeviceptr>(address)); }
    Result<void*> allocate_pinned(size_t bytes) override {
        void* p = nullptr;
        if (CUresult r = d_.alloc_host(&p, bytes); r != kCudaSuccess) return Status::error("cuMemAllocHost of {} bytes: {}", bytes, d_.describe(r));
        return p;
    }
    void release_pinned(void* host) override { d_.free_host(host); }

    // cuMemcpyHtoD may return before a pageable copy's DMA has finished (CUDA's "API
    // synchronization behavior"); the context synchronisation makes the timing honest.
    Status copy_to_device(uint64_t device, const void* host, size_t bytes) override {
        if (CUresult r = d_.copy_htod(static_cast<CUdeviceptr>(device), host, bytes); r != kCudaSuccess) return Status::error("cuMemcpyHtoD: {}", d_.describe(r));
        return sync();
    }
    Status copy_to_host(void* host, uint64_t device, size_t bytes) override {
        if (CUresult r = d_.copy_dtoh(host, static_cast<CUdeviceptr>(device), bytes); r != kCudaSuccess) return Status::error("cuMemcpyDtoH: {}", d_.describe(r));
        return sync();
    }

private:
    Status sync() {
        if (CUresult r = d_.synchronize(); r != kCudaSuccess) return Status::error("cuCtxSynchronize: {}", d_.describe(r));
        return Status::ok();
    }
    CudaDriver d_;
    CUdevice device_;  // its primary context is retained for this object's life
    std::string description_;
};

}  // namespace

Result<std::unique_ptr<GpuMemoryApi>> open_cuda_memory_api(int ordinal) {
#ifdef _WIN32
    static DynamicLibrary lib = DynamicLibrary::open({"nvcuda.dll"});
#else
    static DynamicLibrary lib = DynamicLibrary::open({"libcuda.so.1", "libcuda.so"});
#endif
    if (!lib.loaded()) return Status::error("CUDA driver: {} (install the NVIDIA driver)", lib.error());
    CudaDriver d;
    d.init = lib.symbol<decltype(d.init)>("cuInit");
    d.driver_version = lib.symbol<decltype(d.driver_version)>("cuDriverGetVersion");
    d.device_get = lib.symbol<decltype(d.device_get)>("cuDeviceGet");
    d.primary_retain = lib.symbol<decltype(d.primary_retain)>("cuDevicePrimaryCtxRetain");
    d.primary_release = lib.symbol<decltype(d.primary_release)>("cuDevicePrimaryCtxRelease_v2");
    if (!d.primary_release) d.primary_release = lib.symbol<decltype(d.primary_release)>("cuDevicePrimaryCtxRelease");
    d.set_current = lib.symbol<decltype(d.set_current)>("cuCtxSetCurrent");
    d.synchronize = lib.symbol<decltype(d.synchronize)>("cuCtxSynchronize");
    d.mem_info = lib.symbol<decltype(d.mem_info)>("cuMemGetInfo_v2");
    d.alloc = lib.symbol<decltype(d.alloc)>("cuMemAlloc_v2");
    d.free = lib.symbol<decltype(d.free)>("cuMemFree_v2");
    d.alloc_host = lib.symbol<decltype(d.alloc_host)>("cuMemAllocHost_v2");
    d.free_host = lib.symbol<decltype(d.free_host)>("cuMemFreeHost");
    d.copy_htod = lib.symbol<decltype(d.copy_htod)>("cuMemcpyHtoD_v2");
    d.copy_dtoh = lib.symbol<decltype(d.copy_dtoh)>("cuMemcpyDtoH_v2");
    d.error_string = lib.symbol<decltype(d.error_string)>("cuGetErrorString");
    if (!d.init || !d.device_get || !d.primary_retain || !d.set_current || !d.synchronize || !d.mem_info || !d.alloc || !d.free ||
        !d.alloc_host || !d.free_host || !d.copy_htod || !d.copy_dtoh) {
        return Status::error("CUDA driver: the library lacks a memory entry point of the driver API (driver too old: update it)");
    }
    if (CUresult r = d.init(0); r != kCudaSuccess) return Status::error("cuInit: {}", d.describe(r));
    CUdevice device = 0;
    if (CUresult r = d.device_get(&device, ordinal); r != kCudaSuccess) return Status::error("cuDeviceGet({}): {}", ordinal, d.describe(r));
    // The primary context is the one the CUDA runtime (and so the GPU backend) uses for this device.
    CUcontext context = nullptr;
    if (CUresult r = d.primary_retain(&context, device); r != kCudaSuccess) return Status::error("cuDevicePrimaryCtxRetain: {}", d.describe(r));
    if (CUresult r = d.set_current(context); r != kCudaSuccess) {
        if (d.primary_release) d.primary_release(device);
        return Status::error("cuCtxSetCurrent: {}", d.describe(r));
    }
    int version = 0;
    std::string description = "CUDA driver";
    if (d.driver_version && d.driver_version(&version) == kCudaSuccess) description += fmt::format(" {}.{}", version / 1000, (version % 1000) / 10);
    return std::unique_ptr<GpuMemoryApi>(std::make_unique<CudaMemoryApi>(d, device, description));
}

Result<std::unique_ptr<GpuMemoryApi>> open_gpu_memory_api(GpuVendor vendor, int ordinal) {
    switch (vendor) {
        case GpuVendor::nvidia: return open_cuda_memory_api(ordinal);
        case GpuVendor::amd: return open_hip_memory_api(ordinal);
        default: return Status::error("self-test: expected an NVIDIA or AMD GPU, got a device of unknown vendor");
    }
}

}  // namespace strata
