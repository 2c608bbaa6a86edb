#include "backend/gpu/gpu_shard.h"

#include <string>

#include "gguf/tensor_type.h"

namespace strata::gpu {

GpuShard::GpuShard(int ordinal, uint64_t vram_budget, uint32_t layer_begin, uint32_t layer_end, const GpuTuning& tuning)
    : layer_begin_(layer_begin), layer_end_(layer_end), pool_(std::make_unique<DevicePool>(ordinal)),
      ctx_(std::make_unique<GpuContext>(ordinal, *pool_, tuning)) {
    pool_->set_budget(vram_budget);
    ctx_->activate();  // events belong to the device current when they are made
    done_ = std::make_unique<GpuEvent>();
    if (op_profiling_enabled()) {
        profiler_ = std::make_unique<OpProfiler>(ctx_->stream());
        ctx_->set_profiler(profiler_.get());
    }
}

Result<DeviceWeight> GpuShard::upload(const Weight& w, bool matrix) {
    if (!w) return DeviceWeight{};
    if (auto it = uploaded_.find(w.data); it != uploaded_.end()) return it->second;
    const std::string name = w.info ? w.info->name : std::string("(unnamed)");
    if (matrix && !gpu_supports_rows(w.type, w.ne[0])) {
        return Status::error("tensor {}: type {} with rows of {} has no GPU kernel yet (run with --device cpu)", name,
                             tensor_type_name(w.type), w.ne[0]);
    }
    const uint64_t bytes = w.row_bytes * static_cast<uint64_t>(w.rows());
    std::string error;
    DeviceBuffer buffer = pool_->allocate(bytes, &error);
    if (!buffer) return Status::error("uploading tensor {} ({} bytes) to GPU {}: {}", name, bytes, ordinal(), error);
    ctx_->upload(buffer.data(), w.data, bytes);
    DeviceWeight d;
    d.data = buffer.as<uint8_t>();
    d.type = w.type;
    for (int i = 0; i < 4; ++i) d.ne[i] = w.ne[i];
    d.row_bytes = w.row_bytes;
    weight_bytes_ += bytes;
    buffers_.push_back(std::move(buffer));
    uploaded_.emplace(w.data, d);
    return d;
}

Result<const void*> GpuShard::upload_table(const void* data, uint64_t bytes, const char* what) {
    std::string error;
    DeviceBuffer buffer = pool_->allocate(bytes, &error);
    if (!buffer) return Status::error("uploading {} ({} bytes) to GPU {}: {}", what, bytes, ordinal(), error);
    ctx_->upload(buffer.data(), data, bytes);
    ctx_->synchronize();
    const void* device = buffer.data();
    weight_bytes_ += bytes;
    buffers_.push_back(std::move(buffer));
    return device;
}

Status GpuShard::make_route_counters(uint32_t n_layer) {
    std::string error;
    route_counters_ = pool_->allocate(uint64_t(n_layer) * sizeof(unsigned), &error);
    if (!route_counters_) return Status::error("the routing counters on GPU {}: {}", ordinal(), error);
    const std::vector<unsigned> zeros(n_layer, 0u);
    ctx_->upload(route_counters_.data(), zeros.data(), zeros.size() * sizeof(unsigned));
    ctx_->synchronize();  // `zeros` dies here
    return Status::ok();
}

}  // namespace strata::gpu
