#pragma once
// The few memory calls of a GPU runtime that `strata devices --selftest` needs, over the CUDA
// driver API or the HIP runtime loaded at run time (dlopen), so the self-test runs in any build,
// CPU-only ones included, on whichever card the machine has. Kernels are not here: those belong
// to the GPU backend and its op-parity tests.
//
//   auto api = open_gpu_memory_api(GpuVendor::nvidia, /*ordinal=*/0);
//   if (!api) return fail(api.status().message());
//   STRATA_ASSIGN_OR_RETURN(uint64_t buffer, (*api)->allocate(1 << 20));
//   STRATA_TRY((*api)->copy_to_device(buffer, host.data(), host.size()));
//   (*api)->release(buffer);

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "device/device.h"

namespace strata {

struct GpuMemoryInfo {
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
};

class GpuMemoryApi {
public:
    virtual ~GpuMemoryApi() = default;

    virtual std::string description() const = 0;  // "CUDA driver 12.4", "HIP runtime 6.2"
    virtual Result<GpuMemoryInfo> memory_info() = 0;

    // Device memory, as the device address the runtime returned.
    virtual Result<uint64_t> allocate(size_t bytes) = 0;
    virtual void release(uint64_t address) = 0;
    // Page-locked host memory: the DMA engines copy from it without a staging buffer.
    virtual Result<void*> allocate_pinned(size_t bytes) = 0;
    virtual void release_pinned(void* host) = 0;

    // Both return once the bytes have arrived, so a host clock around a call times the copy.
    virtual Status copy_to_device(uint64_t device, const void* host, size_t bytes) = 0;
    virtual Status copy_to_host(void* host, uint64_t device, size_t bytes) = 0;
};

// Loads the vendor's runtime and makes `ordinal` (the runtime's number, as resolve_device_flag()
// gives it) current for the calling thread. Fails with the runtime's own error text.
Result<std::unique_ptr<GpuMemoryApi>> open_gpu_memory_api(GpuVendor vendor, int ordinal);
Result<std::unique_ptr<GpuMemoryApi>> open_cuda_memory_api(int ordinal);
Result<std::unique_ptr<GpuMemoryApi>> open_hip_memory_api(int ordinal);

}  // namespace strata
