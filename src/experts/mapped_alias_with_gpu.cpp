// The mapping's check (experts/mapped_alias.h) on a real GPU: a page-locked buffer, its runtime
// address, and the kernels that read, poll and answer through it.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend/gpu/gpu_ops.h"
#include "experts/mapped_alias.h"

namespace strata {
namespace {

class RuntimeMappedProbe final : public MappedMemoryProbe {
public:
    explicit RuntimeMappedProbe(gpu::GpuContext& ctx) : ctx_(ctx) {
        if (host_.allocate(kWords * sizeof(uint32_t), &error_)) device_ = ctx.pool().allocate(kWords * sizeof(uint32_t), &error_);
    }
    // Why the probe's buffers could not be had (page-locked memory refused, or no VRAM left for
    // 256 bytes); empty when the runtime simply maps nothing.
    std::string error() const { return device_ ? "" : error_; }
    uint32_t* host_words() override { return device_ ? host_.as<uint32_t>() : nullptr; }
    const void* device_alias() override { return device_ ? host_.device_view() : nullptr; }
    std::vector<uint32_t> gpu_reads_alias() override {
        gpu::gpu_copy_words(device_.data(), host_.device_view(), kWords * sizeof(uint32_t), ctx_);
        std::vector<uint32_t> out(kWords);
        ctx_.download(out.data(), device_.data(), kWords * sizeof(uint32_t));
        ctx_.synchronize();
        return out;
    }
    void gpu_waits_then_answers(uint32_t value) override {
        gpu::gpu_probe_wait_then_answer(static_cast<uint32_t*>(host_.device_view()), value, ctx_);
    }
    void synchronize() override { ctx_.synchronize(); }

private:
    gpu::GpuContext& ctx_;
    gpu::PinnedBuffer host_;
    gpu::DeviceBuffer device_;
    std::string error_;
};

}  // namespace

MappedAliasReport check_mapped_alias_on_device(gpu::GpuContext& ctx) {
    static std::mutex mutex;
    static std::map<int, MappedAliasReport> checked;  // by device: a driver's behaviour is per card
    std::lock_guard lock(mutex);
    const int device = ctx.device().ordinal;
    if (auto it = checked.find(device); it != checked.end()) return it->second;
    RuntimeMappedProbe probe(ctx);
    MappedAliasReport report;
    if (!probe.error().empty()) report.unchecked_reason = probe.error();
    else report = check_mapped_alias(probe);
    return checked[device] = report;
}

}  // namespace strata
