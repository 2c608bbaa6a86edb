#include "runtime/gpu_placement.h"

#include <fmt/format.h>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "experts/expert_profile.h"
#include "plan/units.h"

namespace strata {

std::string GpuPlacement::describe() const {
    if (!tiered) return "placement: every weight in VRAM";
    std::string line = fmt::format("placement: {} of {} experts cached in VRAM ({:.1f}%), the rest computed from RAM",
                                   cache_slots, plan.weights.expert_count,
                                   plan.weights.expert_count ? 100.0 * static_cast<double>(cache_slots) /
                                                                   static_cast<double>(plan.weights.expert_count)
                                                             : 0.0);
    if (summary && summary->slot_bytes) line += "\n" + summary->describe();
    return line;
}

Result<GpuPlacement> place_on_gpu(const GgufFile& file, ComputeOptions& options, const GpuPlacementRequest& request) {
    GpuPlacement placement;
    if (options.device == ComputeDevice::Cpu) return placement;
    uint64_t free_bytes = 0, total_bytes = 0;
    if (!gpu::device_memory(options.gpu_ordinal, &free_bytes, &total_bytes)) return placement;  // load_model_on says why

    STRATA_ASSIGN_OR_RETURN(ModelInventory inventory, inventory_from_gguf(file));
    STRATA_ASSIGN_OR_RETURN(ModelWeights weights, summarize_weights(inventory));
    if (weights.expert_count == 0) {
        options.vram_budget = request.vram_budget;
        return placement;
    }
    PlanRequest req;
    req.gpu = DeviceMemory{"GPU " + std::to_string(options.gpu_ordinal), total_bytes, free_bytes};
    req.vram_budget = request.vram_budget;
    req.vram_reserve = request.vram_reserve;
    auto ram = host_available_ram();
    req.ram_bytes = ram ? *ram : 0;
    req.n_ctx = request.n_ctx;
    req.kv_type = options.kv_f16 ? KvElementType::F16 : KvElementType::F32;
    req.n_batch = request.n_batch;
    placement.plan = make_plan(inventory, weights, req);
    const Plan& plan = placement.plan;
    options.vram_budget = request.vram_budget;

    const bool all_fit = plan.vram_expert_slots >= weights.expert_count;
    if (all_fit && !request.force_tiers) return placement;
    if (!plan.fits && request.expert_slots < 0) {
        std::string why = "the memory plan does not fit:";
        for (const auto& p : plan.problems) why += " " + p;
        for (const auto& s : plan.suggestions) why += " Suggestion: " + s;
        return Status::error("{} (see `strata plan -m {}`)", why, file.path());
    }
    placement.tiered = true;
    placement.cache_slots = request.expert_slots >= 0 ? static_cast<uint64_t>(request.expert_slots)
                                                      : std::min<uint64_t>(plan.vram_expert_slots, weights.expert_count);
    placement.stats = std::make_shared<GpuExpertTierStats>();
    placement.stats_mutex = std::make_shared<std::mutex>();
    placement.summary = std::make_shared<GpuExpertTierSummary>();

    GpuExpertTierOptions tier;
    tier.cache_slots = placement.cache_slots;
    // The plan sized the staging ring when it found the experts too many for VRAM; a forced tiering
    // (--expert-slots on a card they fit) takes the same ring the planner would have reserved.
    tier.staging_slots = 2 * staging_slots_per_half(inventory.config);
    tier.policy = request.expert_policy;
    tier.miss_lane = request.miss_lane;
    if (!request.expert_profile.empty()) {
        STRATA_ASSIGN_OR_RETURN(ExpertProfileModel who, expert_profile_model(file));
        STRATA_ASSIGN_OR_RETURN(ExpertProfile profile, load_expert_profile(request.expert_profile, who));
        tier.hot_set = hottest_first(profile);
    }
    tier.stats = placement.stats;
    tier.stats_mutex = placement.stats_mutex;
    auto summary = placement.summary;
    options.routed_experts = [tier, summary](const GgufFile& f, gpu::GpuContext& ctx) {
        return make_gpu_expert_tiers(f, ctx, tier, summary.get());
    };
    return placement;
}

}  // namespace strata
