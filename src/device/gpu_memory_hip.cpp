// GpuMemoryApi over the HIP runtime (libamdhip64 / amdhip64_N.dll) through dlopen. Only entry
// points whose signatures are the same in HIP 5, 6 and 7 (see runtime_hip.cpp).
#include <fmt/format.h>

#include "device/dynamic_library.h"
#include "device/gpu_memory_api.h"

namespace strata {
namespace {

using hipError_t = int;
constexpr hipError_t kHipSuccess = 0;
constexpr int kHipMemcpyHostToDevice = 1, kHipMemcpyDeviceToHost = 2;  // hipMemcpyKind

struct HipRuntime {
    hipError_t (*runtime_version)(int*) = nullptr;
    hipError_t (*set_device)(int) = nullptr;
    hipError_t (*synchronize)() = nullptr;
    hipError_t (*mem_info)(size_t*, size_t*) = nullptr;
    hipError_t (*malloc)(void**, size_t) = nullptr;
    hipError_t (*free)(void*) = nullptr;
    hipError_t (*host_malloc)(void**, size_t, unsigned) = nullptr;
    hipError_t (*host_free)(void*) = nullptr;
    hipError_t (*memcpy)(void*, const void*, size_t, int) = nullptr;
    const char* (*error_string)(hipError_t) = nullptr;

    std::string describe(hipError_t r) const {
        const char* text = error_string ? error_string(r) : nullptr;
        return text ? fmt::format("HIP error {}: {}", r, text) : fmt::format("HIP error {}", r);
    }
};

void* as_pointer(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }

class HipMemoryApi final : public GpuMemoryApi {
public:
    HipMemoryApi(HipRuntime runtime, std::string description) : h_(runtime), description_(std::move(description)) {}

    std::string description() const override { return description_; }

    Result<GpuMemoryInfo> memory_info() override {
        size_t free = 0, total = 0;
        if (hipError_t r = h_.mem_info(&free, &total); r != kHipSuccess) return Status::error("hipMemGetInfo: {}", h_.describe(r));
        return GpuMemoryInfo{free, total};
    }
    Result<uint64_t> allocate(size_t bytes) override {
        void* p = nullptr;
        if (hipError_t r = h_.malloc(&p, bytes); r != kHipSuccess) return Status::error("hipMalloc of {} bytes: {}", bytes, h_.describe(r));
        return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
    }
    void release(uint64_t address) override { h_.free(as_pointer(address)); }
    Result<void*> allocate_pinned(size_t bytes) override {
        void* p = nullptr;
        if (hipError_t r = h_.host_malloc(&p, bytes, 0); r != kHipSuccess) return Status::error("hipHostMalloc of {} bytes: {}", bytes, h_.describe(r));
        return p;
    }
    void release_pinned(void* host) override { h_.host_free(host); }

    Status copy_to_device(uint64_t device, const void* host, size_t bytes) override {
        if (hipError_t r = h_.memcpy(as_pointer(device), host, bytes, kHipMemcpyHostToDevice); r != kHipSuccess)
            return Status::error("hipMemcpy host->device: {}", h_.describe(r));
        return sync();
    }
    Status copy_to_host(void* host, uint64_t device, size_t bytes) override {
        if (hipError_t r = h_.memcpy(host, as_pointer(device), bytes, kHipMemcpyDeviceToHost); r != kHipSuccess)
            return Status::error("hipMemcpy device->host: {}", h_.describe(r));
        return sync();
    }

private:
    Status sync() {
        if (hipError_t r = h_.synchronize(); r != kHipSuccess) return Status::error("hipDeviceSynchronize: {}", h_.describe(r));
        return Status::ok();
    }
    HipRuntime h_;
    std::string description_;
};

}  // namespace

Result<std::unique_ptr<GpuMemoryApi>> open_hip_memory_api(int ordinal) {
#ifdef _WIN32
    static DynamicLibrary lib = DynamicLibrary::open({"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"});
#else
    static DynamicLibrary lib = DynamicLibrary::open({"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"});
#endif
    if (!lib.loaded()) return Status::error("HIP runtime: {} (install the ROCm HIP runtime, or the HIP SDK on Windows)", lib.error());
    HipRuntime h;
    h.runtime_version = lib.symbol<decltype(h.runtime_version)>("hipRuntimeGetVersion");
    h.set_device = lib.symbol<decltype(h.set_device)>("hipSetDevice");
    h.synchronize = lib.symbol<decltype(h.synchronize)>("hipDeviceSynchronize");
    h.mem_info = lib.symbol<decltype(h.mem_info)>("hipMemGetInfo");
    h.malloc = lib.symbol<decltype(h.malloc)>("hipMalloc");
    h.free = lib.symbol<decltype(h.free)>("hipFree");
    h.host_malloc = lib.symbol<decltype(h.host_malloc)>("hipHostMalloc");
    h.host_free = lib.symbol<decltype(h.host_free)>("hipHostFree");
    h.memcpy = lib.symbol<decltype(h.memcpy)>("hipMemcpy");
    h.error_string = lib.symbol<decltype(h.error_string)>("hipGetErrorString");
    if (!h.set_device || !h.synchronize || !h.mem_info || !h.malloc || !h.free || !h.host_malloc || !h.host_free || !h.memcpy) {
        return Status::error("HIP runtime: the library lacks a memory entry point (hipMalloc, hipHostMalloc, hipMemcpy, ...): update ROCm");
    }
    if (hipError_t r = h.set_device(ordinal); r != kHipSuccess) return Status::error("hipSetDevice({}): {}", ordinal, h.describe(r));
    int version = 0;
    std::string description = "HIP runtime";
    // HIP encodes major*10000000 + minor*100000 + patch.
    if (h.runtime_version && h.runtime_version(&version) == kHipSuccess) description += fmt::format(" {}.{}", version / 10000000, (version / 100000) % 100);
    return std::unique_ptr<GpuMemoryApi>(std::make_unique<HipMemoryApi>(h, description));
}

}  // namespace strata
