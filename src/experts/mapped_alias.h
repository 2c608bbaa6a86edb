#pragma once
// Does the GPU really share page-locked host memory through the address the runtime gives for it?
// The expert tiers lean on that mapping three ways: kernels read small transfers where they lie
// (the routing's ids, the CPU lane's sum), the host polls words kernels write (routing flags,
// tagged words), and a kernel polls a word the host writes (the CPU lane's end: early combine).
// The Windows ports this design came from met runtimes where each of these broke:
// hipHostGetDevicePointer handing back the host address, which that driver had not mapped; and
// a host write that the GPU saw only once the host entered the driver (WDDM batches its work),
// so a kernel polling for it waited until something else called the runtime.
// So the tiers check each, once per device at load, and use only what works (copies and events
// otherwise: slower, never wrong). The check runs through MappedMemoryProbe, which the GPU runtime
// implements (mapped_alias_with_gpu.cpp) and tests replay from recorded behaviour.
//
//   MappedAliasReport r = check_mapped_alias(probe);
//   if (!r.kernels_see_host_writes_while_running) early_combine = false;

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

class MappedMemoryProbe {
public:
    virtual ~MappedMemoryProbe() = default;
    // A page-locked buffer of kWords words, and the address the runtime gives kernels for it
    // (null: the runtime maps none).
    static constexpr size_t kWords = 64;
    virtual uint32_t* host_words() = 0;
    virtual const void* device_alias() = 0;
    // Queues a kernel that copies the words through the alias into device memory, waits, and
    // returns what it copied: what the GPU saw of writes the host made before the launch.
    virtual std::vector<uint32_t> gpu_reads_alias() = 0;
    // Queues, without waiting: a kernel that polls word 0 through the alias until it holds
    // `value` (giving up after a bound of its own), then a kernel that writes `value` into word 1
    // through the alias. The host then writes word 0 and polls word 1 without calling the runtime.
    virtual void gpu_waits_then_answers(uint32_t value) = 0;
    // Waits for everything queued (entering the driver).
    virtual void synchronize() = 0;
};

struct MappedAliasReport {
    bool has_alias = false;
    bool alias_is_host_address = false;              // as under CUDA's unified addressing: fine when it works
    bool kernels_see_host_writes = false;            // written before the launch
    bool kernels_see_host_writes_while_running = false;  // without the host entering the driver
    bool host_sees_kernel_writes_by_polling = false;     // before any synchronize
    // Set when the check could not run (its buffers refused): nothing is used, as if unmapped.
    std::string unchecked_reason;

    // Kernels read small transfers through the alias (else: copies).
    bool mapped_reads() const { return has_alias && kernels_see_host_writes; }
    // The host learns of a kernel's writes by polling memory (else: events).
    bool host_polling() const { return mapped_reads() && host_sees_kernel_writes_by_polling; }
    // A kernel waits for a host write by polling (else: the host waits, then queues the work).
    bool gpu_polling() const { return mapped_reads() && kernels_see_host_writes_while_running; }
    // "page-locked memory mapped into the GPU: reads, host polling and GPU polling all work", or
    // which of them are off and why.
    std::string describe() const;
};

// host_spins: how many times the host polls word 1 before it calls that write not seen (a count,
// not a time: the answer comes within microseconds where the mapping works).
MappedAliasReport check_mapped_alias(MappedMemoryProbe& probe, uint64_t host_spins = uint64_t(1) << 24);

namespace gpu {
class GpuContext;
}
// The check on the context's GPU, made once per device in a process (mapped_alias_with_gpu.cpp;
// builds with a GPU backend only).
MappedAliasReport check_mapped_alias_on_device(gpu::GpuContext& ctx);

}  // namespace strata
