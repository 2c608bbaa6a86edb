// Making the GPU expert tiers (experts/gpu_expert_tiers_impl.h): the slot pool and its views, the
// page-locked file, the link's measured speed, the cache's first residents. Built only with a GPU
// backend; the twin gpu_expert_tiers_without_gpu.cpp says why there are none.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "experts/gpu_expert_tiers_impl.h"

namespace strata {

namespace gpu_tiers {

namespace {
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

GpuExpertTiers::GpuExpertTiers(std::vector<ExpertLayerTensors> layers, gpu::GpuContext& ctx, const GpuExpertTierOptions& options)
    : options_(options), ordinal_(ctx.device().ordinal), copy_stream_(ordinal_) {
    n_expert_ = layers.empty() ? 0 : static_cast<uint32_t>(layers[0].gate.ne[2]);
    for (auto& l : layers) {
        TierLayer t;
        t.host = l;
        t.gate_bytes = static_cast<uint64_t>(l.gate.ne[1]) * l.gate.row_bytes;
        t.up_bytes = static_cast<uint64_t>(l.up.ne[1]) * l.up.row_bytes;
        t.down_bytes = static_cast<uint64_t>(l.down.ne[1]) * l.down.row_bytes;
        t.up_offset = align_up(t.gate_bytes, kExpertPartAlignment);
        t.down_offset = t.up_offset + align_up(t.up_bytes, kExpertPartAlignment);
        slot_bytes_ = std::max(slot_bytes_, t.down_offset + align_up(t.down_bytes, kExpertPartAlignment));
        if (layer_index_.size() <= l.layer) layer_index_.resize(l.layer + 1, -1);
        layer_index_[l.layer] = static_cast<int32_t>(layers_.size());
        layers_.push_back(std::move(t));
    }
    if (options_.policy == PolicyKind::LfuDecay) policy_ = std::make_unique<LfuDecayPolicy>(key_count(), options_.lfu_decay);
    else policy_ = std::make_unique<LruPolicy>(key_count());
}

Status GpuExpertTiers::init(gpu::GpuContext& ctx, GpuExpertTierSummary* summary) {
    staging_count_ = std::max<uint64_t>(2, options_.staging_slots / 2 * 2);
    // To compare ring sizes (beside no cache: the plan reserved only its own ring).
    if (options_.tuning.staging_slots) staging_count_ = std::max<uint64_t>(2, *options_.tuning.staging_slots / 2 * 2);
    cache_count_ = std::min<uint64_t>(options_.cache_slots, key_count());
    const uint64_t n_slots = cache_count_ + staging_count_;
    std::string error;
    pool_buffer_ = ctx.pool().allocate(n_slots * slot_bytes_, &error);
    if (!pool_buffer_) {
        return Status::error("the expert cache ({} slots of {:.1f} MiB) does not fit in VRAM: {}", n_slots,
                             static_cast<double>(slot_bytes_) / (1 << 20), error);
    }
    auto* base = pool_buffer_.as<uint8_t>();
    for (TierLayer& t : layers_) {
        auto view = [&](const Weight& w, uint64_t offset) {
            gpu::DeviceWeight d;
            d.data = base + offset;
            d.type = w.type;
            d.ne[0] = w.ne[0], d.ne[1] = w.ne[1], d.ne[2] = static_cast<int64_t>(n_slots), d.ne[3] = 1;
            d.row_bytes = w.row_bytes;
            d.matrix_bytes = slot_bytes_;
            return d;
        };
        if (!gpu::gpu_supports_type(t.host.gate.type) || !gpu::gpu_supports_type(t.host.up.type) ||
            !gpu::gpu_supports_type(t.host.down.type)) {
            return Status::error("layer {}: expert types {}/{}/{} have no GPU kernel (run with --device cpu)",
                                 t.host.layer, tensor_type_name(t.host.gate.type),
                                 tensor_type_name(t.host.up.type), tensor_type_name(t.host.down.type));
        }
        t.gate = view(t.host.gate, 0);
        t.up = view(t.host.up, t.up_offset);
        t.down = view(t.host.down, t.down_offset);
        STRATA_TRY(upload_bias(ctx, t.host.gate_bias, t.gate_bias));
        STRATA_TRY(upload_bias(ctx, t.host.up_bias, t.up_bias));
        STRATA_TRY(upload_bias(ctx, t.host.down_bias, t.down_bias));
    }
    ctx.synchronize();  // the bias copies read the mapped file
    slots_ = ExpertSlots(key_count(), cache_count_, staging_count_);

    if (options_.tuning.warming == CacheWarming::Read) warmer_.set_demote(false);
    // To compare: the decode split's bias (experts/miss_lanes.h) other than its default.
    if (options_.tuning.decode_share_bias) lanes_.set_decode_share_bias(*options_.tuning.decode_share_bias);
    if (lane_done_.allocate(64, &error)) *lane_done_.as<uint32_t>() = 0;
    else early_combine_ = false;  // the lane is then awaited on the host, as before
    if (host_flags_on_) host_flags_on_ = routing_flag_.allocate() && prediction_flag_.allocate();
    // Only what the runtime's mapping of page-locked memory really does (experts/mapped_alias.h).
    const MappedAliasReport mapping = check_mapped_alias_on_device(ctx);
    mapped_reads_ = mapping.mapped_reads();
    if (!mapping.gpu_polling()) early_combine_ = false, tagged_on_ = false;
    if (!mapping.host_polling()) host_flags_on_ = false, tagged_on_ = false;
    if (summary) summary->mapping_note = mapping.describe();
    pin_file(summary);
    measure_link(ctx, summary);
    fill_cache(ctx);
    if (summary) {
        summary->moe_layers = layers_.size();
        summary->experts_per_layer = n_expert_;
        summary->slot_bytes = slot_bytes_;
        summary->cache_slots = cache_count_;
        summary->staging_slots = staging_count_;
    }
    return Status::ok();
}


void GpuExpertTiers::end_forward(gpu::GpuContext& g) {
    await_lane();
    timeline_.end_pass(g, copy_stream_);
    for (Prefetched& p : prefetched_) p.layer = -1, p.experts.clear();
    streamed_ahead_.layer = -1, streamed_ahead_.experts.clear();
}

Status GpuExpertTiers::upload_bias(gpu::GpuContext& ctx, const Weight& w, gpu::DeviceBuffer& out) {
    if (!w) return Status::ok();
    const uint64_t bytes = static_cast<uint64_t>(w.rows()) * w.row_bytes;
    std::string error;
    out = ctx.pool().allocate(bytes, &error);
    if (!out) return Status::error("the expert biases ({} bytes) do not fit in VRAM: {}", bytes, error);
    ctx.upload(out.data(), w.data, bytes);
    return Status::ok();
}

// When the link will be done with what is queued on it, by the measured link speed: a batch

void GpuExpertTiers::pin_file(GpuExpertTierSummary* summary) {
    if (!options_.pin_file || layers_.empty()) {
        if (summary) summary->pin_note = "not asked for";
        return;
    }
    std::vector<HostRange> ranges;
    for (const TierLayer& t : layers_) {
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (const Weight* w : {&t.host.gate, &t.host.up, &t.host.down}) {
            const auto b = reinterpret_cast<uintptr_t>(w->data);
            lo = std::min(lo, b), hi = std::max(hi, b + static_cast<uint64_t>(w->rows()) * w->row_bytes);
        }
        ranges.push_back(page_aligned_range(lo, hi));
    }
    const PinOutcome pinned = pin_expert_ranges(ranges, options_.page_lock_limit, pinner_);
    if (summary) {
        summary->file_pinned = pinned.all_pinned();
        summary->pin_note = pinned.note;
    }
}

// Host → VRAM bandwidth from the (pinned) file: the staging ring filled three times.
void GpuExpertTiers::measure_link(gpu::GpuContext& ctx, GpuExpertTierSummary* summary) {
    const TierLayer& L = layers_[0];
    gpu::GpuEvent start, end;
    double best = 0.0;
    for (int rep = 0; rep < 3; ++rep) {
        start.record(copy_stream_.handle());
        for (uint64_t s = 0; s < staging_count_; ++s)
            copy_expert(L, static_cast<int32_t>(s % n_expert_), slots_.ring()[static_cast<size_t>(s)]);
        copies_.submit(copy_stream_.handle());
        end.record(copy_stream_.handle());
        end.synchronize();
        const double secs = static_cast<double>(end.ms_since(start)) / 1e3;
        const double gbps = static_cast<double>(staging_count_ * L.expert_bytes()) / secs / 1e9;
        best = std::max(best, gbps);
    }
    link_gbps_ = best > 0 ? best : 10.0;
    lanes_.set_link(link_gbps_);
    step_done_.record(ctx.stream());
    if (summary) summary->link_gbps = link_gbps_;
}

// The cache starts full: first the profile's hot set (hottest first), then, for the slots
// left, layer after layer expert 0, 1, ... of each, so every layer gets an equal share
// (uniform routing makes any equal share as good as another).
void GpuExpertTiers::fill_cache(gpu::GpuContext& ctx) {
    uint64_t s = 0;
    auto place = [&](int64_t li, int32_t x) {
        if (s >= cache_count_ || slots_.resident(id(li, x))) return;
        copy_expert(layers_[static_cast<size_t>(li)], x, static_cast<int32_t>(s));
        slots_.place(id(li, x), static_cast<int32_t>(s));
        ++s;
        if (copies_.size() >= 3 * 256) copies_.submit(copy_stream_.handle());
    };
    for (const ExpertKey& key : options_.hot_set) {
        if (key.layer >= layer_index_.size() || layer_index_[key.layer] < 0 || key.expert >= n_expert_) continue;
        place(layer_index_[key.layer], static_cast<int32_t>(key.expert));
    }
    const uint64_t n_layers = layers_.size();
    for (uint64_t i = 0; i < key_count() && s < cache_count_; ++i)
        place(static_cast<int64_t>(i % n_layers), static_cast<int32_t>(i / n_layers));
    copies_.submit(copy_stream_.handle());
    copy_stream_.synchronize();
    ctx.synchronize();
}

// One expert on the CPU, for 1, 8 and 40 tokens: the cost model's starting point.
void GpuExpertTiers::calibrate(const TierLayer& L, int64_t e, CpuContext& cpu) {
    calibrated_ = true;
    const CpuExpertCosts c = CpuExpertLane::calibrate(L.host, n_expert_, e, cpu);
    lanes_.set_cpu_costs(c.expert_s, c.token_s);
}


}  // namespace gpu_tiers

std::string GpuExpertTierSummary::describe() const {
    return fmt::format(
        "expert tiers: {} MoE layers × {} experts, slots of {:.2f} MiB: {} cached in VRAM ({:.1f}% of experts), {} "
        "staging; host → VRAM {:.1f} GB/s; {}; {}",
        moe_layers, experts_per_layer, static_cast<double>(slot_bytes) / (1 << 20), cache_slots,
        moe_layers * experts_per_layer > 0 ? 100.0 * static_cast<double>(cache_slots) / static_cast<double>(moe_layers * experts_per_layer) : 0.0,
        staging_slots, link_gbps, pin_note, mapping_note);
}

Result<std::unique_ptr<gpu::RoutedExperts>> make_gpu_expert_tiers(const GgufFile& file, gpu::GpuContext& ctx,
                                                                  const GpuExpertTierOptions& options,
                                                                  GpuExpertTierSummary* summary) {
    STRATA_ASSIGN_OR_RETURN(std::vector<ExpertLayerTensors> layers, expert_tensors_from_gguf(file));
    std::erase_if(layers, [&](const ExpertLayerTensors& l) { return l.layer < options.layer_begin || l.layer >= options.layer_end; });
    if (layers.empty()) return Status::error("{} has no routed experts to tier in layers {}-{}", file.path(), options.layer_begin, options.layer_end);
    auto tiers = std::make_unique<gpu_tiers::GpuExpertTiers>(std::move(layers), ctx, options);
    STRATA_TRY(tiers->init(ctx, summary));
    return std::unique_ptr<gpu::RoutedExperts>(std::move(tiers));
}

}  // namespace strata
