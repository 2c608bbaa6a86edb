#pragma once
// One GPU's share of a model: all of it when the model runs on one GPU, a contiguous run of its
// layers under --split layer. A share owns what its layers need on that device — the memory pool
// (with its own --vram-budget), the stream its ops are queued on, the weights it uploaded, the
// expert tiers of its layers when they do not all fit, the fused routing's per-layer counters —
// and an event that marks the end of its layers in a forward pass, which the next share's
// stream waits on before it copies the activations over (gpu_llama.cpp).
//
//   GpuShard shard(ordinal, budget, 0, 24);
//   STRATA_ASSIGN_OR_RETURN(DeviceWeight wq, shard.upload(host_weight, /*matrix=*/true));

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "backend/gpu/op_profiler.h"
#include "core/status.h"
#include "backend/weight.h"

namespace strata::gpu {

class GpuShard {
public:
    GpuShard(int ordinal, uint64_t vram_budget, uint32_t layer_begin, uint32_t layer_end, const GpuTuning& tuning);
    GpuShard(const GpuShard&) = delete;
    GpuShard& operator=(const GpuShard&) = delete;

    GpuContext& ctx() { return *ctx_; }
    const GpuContext& ctx() const { return *ctx_; }
    DevicePool& pool() { return *pool_; }
    int ordinal() const { return ctx_->device().ordinal; }
    uint32_t layer_begin() const { return layer_begin_; }
    uint32_t layer_end() const { return layer_end_; }
    uint32_t layer_count() const { return layer_end_ - layer_begin_; }
    bool profiling() const { return profiler_ != nullptr; }
    void flush_profile() {
        if (profiler_) profiler_->flush();
    }

    // Copies one weight to this device (once, however many roles share it: tied embeddings).
    // `matrix`: read by the matrix kernels, so its type and row width must have one.
    Result<DeviceWeight> upload(const Weight& w, bool matrix);
    uint64_t weight_bytes() const { return weight_bytes_; }
    // Copies a small host table (e.g. rope frequencies) to this device and waits, so `data` may
    // die after; the copy lives as long as the share.
    Result<const void*> upload_table(const void* data, uint64_t bytes, const char* what);

    // Marks the end of this share's part of a forward pass on its stream.
    GpuEvent& done() { return *done_; }

    // Zeroed per-layer counters of the fused one-token routing, indexed by model layer.
    Status make_route_counters(uint32_t n_layer);
    unsigned* route_counter(int64_t layer) const {
        return route_counters_ ? route_counters_.as<unsigned>() + layer : nullptr;
    }

    RoutedExperts* routed() const { return routed_.get(); }
    void set_routed(std::unique_ptr<RoutedExperts> routed) { routed_ = std::move(routed); }

private:
    uint32_t layer_begin_, layer_end_;
    // Declaration order is destruction order reversed: buffers go back to the pool before it
    // dies, and the tiers (last) are freed first, while the pool and stream they use live.
    std::unique_ptr<DevicePool> pool_;
    std::unique_ptr<GpuContext> ctx_;
    std::unique_ptr<OpProfiler> profiler_;  // set when profiling (op_profiler.h)
    std::unique_ptr<GpuEvent> done_;
    std::vector<DeviceBuffer> buffers_;
    DeviceBuffer route_counters_;
    std::unordered_map<const uint8_t*, DeviceWeight> uploaded_;
    uint64_t weight_bytes_ = 0;
    std::unique_ptr<RoutedExperts> routed_;
};

}  // namespace strata::gpu
