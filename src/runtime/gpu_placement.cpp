#include "runtime/gpu_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "experts/expert_profile.h"
#include "plan/host_ram.h"
#include "plan/units.h"

namespace strata {

std::string GpuPlacement::describe() const {
    if (plan.request.split_tensor) {
        return fmt::format("placement: every layer split by tensor over {} GPUs, every weight in VRAM", plan.gpu_shares.size());
    }
    if (!plan.gpu_shares.empty()) {
        std::string line = fmt::format("placement: layers split over {} GPUs", plan.gpu_shares.size());
        for (size_t i = 0; i < plan.gpu_shares.size(); ++i) {
            const GpuShare& s = plan.gpu_shares[i];
            line += fmt::format("\n  {}: layers {}-{}, ", s.name, s.layer_begin, s.layer_end - 1);
            line += s.expert_slots >= s.expert_count
                        ? std::string("every weight of its layers in VRAM")
                        : fmt::format("{} of its {} experts cached in VRAM, the rest computed from RAM", s.expert_slots,
                                      s.expert_count);
            if (i < share_summaries.size() && share_summaries[i] && share_summaries[i]->slot_bytes) {
                line += "\n    " + share_summaries[i]->describe();
            }
        }
        return line;
    }
    if (!tiered) return "placement: every weight in VRAM";
    std::string line = fmt::format("placement: {} of {} experts cached in VRAM ({:.1f}%), the rest computed from RAM",
                                   cache_slots, plan.weights.expert_count,
                                   plan.weights.expert_count ? 100.0 * static_cast<double>(cache_slots) /
                                                                   static_cast<double>(plan.weights.expert_count)
                                                             : 0.0);
    if (summary && summary->slot_bytes) line += "\n" + summary->describe();
    return line;
}

namespace {

// What every plan of a placement shares: budget and reserve (per GPU), RAM, context, KV type, batch.
void fill_plan_request(const ComputeOptions& options, const GpuPlacementRequest& request, PlanRequest& req) {
    req.vram_budget = request.vram_budget;
    req.vram_reserve = request.vram_reserve;
    const Result<HostRam> ram = read_host_ram();
    req.ram_bytes = ram ? ram->available_bytes : 0;
    req.page_lock_limit = ram ? page_lock_limit(ram->total_bytes) : UINT64_MAX;
    req.n_ctx = request.n_ctx;
    req.kv_type = options.kv_type;
    req.n_batch = request.n_batch;
}

std::string plan_refusal(const Plan& plan, const GgufFile& file) {
    std::string why = "the memory plan does not fit:";
    for (const auto& p : plan.problems) why += " " + p;
    for (const auto& s : plan.suggestions) why += " Suggestion: " + s;
    return fmt::format("{} (see `strata plan -m {}`)", why, file.path());
}

// The tier options every GPU shares (policy, lane, profile, statistics); slots and layers are per GPU.
Result<GpuExpertTierOptions> tier_options(const GgufFile& file, const ModelConfig& config, const GpuPlacementRequest& request,
                                          GpuPlacement& placement) {
    GpuExpertTierOptions tier;
    // The plan sized the staging ring when it found the experts too many for VRAM; a forced tiering
    // (--expert-slots on a card they fit) takes the same ring the planner would have reserved.
    tier.staging_slots = request.staging_slots >= 2 ? static_cast<uint64_t>(request.staging_slots)
                                                    : 2 * staging_slots_per_half(config);
    tier.activation = architecture(config.arch).family == ArchFamily::GptOss ? ExpertActivation::GptOssClampedSwiGlu : ExpertActivation::SwiGlu;
    tier.policy = request.expert_policy;
    tier.miss_lane = request.miss_lane;
    tier.tuning = request.tier_tuning;
    tier.prefetch = request.expert_prefetch;
    // The limit the plan was made with (fill_plan_request; unknown RAM: none, and a refused
    // registration still falls back layer by layer).
    tier.page_lock_limit = placement.plan.request.page_lock_limit;
    if (!request.expert_profile.empty()) {
        STRATA_ASSIGN_OR_RETURN(ExpertProfileModel who, expert_profile_model(file));
        STRATA_ASSIGN_OR_RETURN(ExpertProfile profile, load_expert_profile(request.expert_profile, who));
        tier.hot_set = hottest_first(profile);
    }
    placement.stats = std::make_shared<GpuExpertTierStats>();
    placement.stats_mutex = std::make_shared<std::mutex>();
    tier.stats = placement.stats;
    tier.stats_mutex = placement.stats_mutex;
    return tier;
}

RoutedExpertsFactory tiers_factory(const GpuExpertTierOptions& tier, std::shared_ptr<GpuExpertTierSummary> summary) {
    return [tier, summary](const GgufFile& f, gpu::GpuContext& ctx) { return make_gpu_expert_tiers(f, ctx, tier, summary.get()); };
}

// --split layer: every GPU planned with its own memory; one ordinal listed k times gives each of
// its shares 1/k of the card's free memory (a one-GPU machine testing the split).
Result<GpuPlacement> place_on_gpus(const GgufFile& file, ComputeOptions& options, const GpuPlacementRequest& request) {
    GpuPlacement placement;
    STRATA_ASSIGN_OR_RETURN(ModelInventory inventory, inventory_from_gguf(file));
    STRATA_ASSIGN_OR_RETURN(ModelWeights weights, summarize_weights(inventory));
    PlanRequest req;
    const std::vector<uint64_t>& budgets = request.vram_budgets;
    if (!budgets.empty() && budgets.size() != options.split_ordinals.size()) {
        return Status::error("--vram-budget: expected one size for each of the {} GPUs of --gpus (or one for all), got {}",
                             options.split_ordinals.size(), budgets.size());
    }
    // Each GPU's own budget (uneven cards), or the one budget of all.
    const auto budget_of = [&](size_t i) { return budgets.empty() ? request.vram_budget : budgets[i]; };
    for (size_t i = 0; i < options.split_ordinals.size(); ++i) {
        const int ordinal = options.split_ordinals[i];
        uint64_t free_bytes = 0, total_bytes = 0;
        if (!gpu::device_memory(ordinal, &free_bytes, &total_bytes)) {
            return Status::error("--gpus: GPU {} is not usable here (see `strata devices`)", ordinal);
        }
        const auto repeats = static_cast<uint64_t>(std::count(options.split_ordinals.begin(), options.split_ordinals.end(), ordinal));
        std::string name = fmt::format("GPU {}", ordinal);
        if (repeats > 1) name += fmt::format(" (1/{} of the card)", repeats);
        DeviceMemory gpu{name, total_bytes / repeats, free_bytes / repeats};
        if (!budgets.empty() && budgets[i] > 0) {  // folded into the card: the plan's budget is per request
            gpu.name += fmt::format(", --vram-budget {}", format_bytes(budgets[i]));
            gpu.total_bytes = std::min(gpu.total_bytes, budgets[i]);
            gpu.free_bytes = std::min(gpu.free_bytes, budgets[i]);
        }
        req.split_gpus.push_back(gpu);
    }
    req.split_at = options.split_at;
    req.split_tensor = options.split_tensor;
    fill_plan_request(options, request, req);
    placement.plan = make_plan(inventory, weights, req);
    const Plan& plan = placement.plan;
    if (!plan.fits) return Status::error("{}", plan_refusal(plan, file));
    STRATA_CHECK(plan.gpu_shares.size() == options.split_ordinals.size(), "the plan has one share per GPU of --gpus");
    options.vram_budget = request.vram_budget;
    if (options.split_tensor) {  // every expert in VRAM (the plan checked), no tiers
        if (request.expert_slots >= 0 || request.force_tiers) {
            return Status::error("--expert-slots: a tensor split keeps every expert in VRAM (use --split layer)");
        }
        options.tensor_split.clear();
        for (size_t i = 0; i < options.split_ordinals.size(); ++i) {
            options.tensor_split.push_back(GpuLayerShare{options.split_ordinals[i], 0, inventory.config.n_layer, budget_of(i), nullptr});
        }
        return placement;
    }

    std::optional<GpuExpertTierOptions> tier;
    options.layer_split.clear();
    for (size_t i = 0; i < plan.gpu_shares.size(); ++i) {
        const GpuShare& s = plan.gpu_shares[i];
        GpuLayerShare share{options.split_ordinals[i], s.layer_begin, s.layer_end, budget_of(i), nullptr};
        std::shared_ptr<GpuExpertTierSummary> summary;
        // --expert-slots: this many cache slots on each GPU instead of the plan's (tests).
        const uint64_t slots = request.expert_slots >= 0 ? std::min<uint64_t>(s.expert_count, static_cast<uint64_t>(request.expert_slots))
                                                         : s.expert_slots;
        if (slots < s.expert_count || (request.force_tiers && s.expert_count > 0)) {
            if (!tier) {
                STRATA_ASSIGN_OR_RETURN(tier, tier_options(file, inventory.config, request, placement));
            }
            GpuExpertTierOptions mine = *tier;
            mine.cache_slots = slots;
            mine.layer_begin = s.layer_begin, mine.layer_end = s.layer_end;
            summary = std::make_shared<GpuExpertTierSummary>();
            share.routed_experts = tiers_factory(mine, summary);
            placement.tiered = true;
        }
        placement.cache_slots += slots;
        placement.share_summaries.push_back(summary);
        options.layer_split.push_back(std::move(share));
    }
    return placement;
}

}  // namespace

Result<GpuPlacement> place_on_gpu(const GgufFile& file, ComputeOptions& options, const GpuPlacementRequest& request) {
    GpuPlacement placement;
    if (options.device == ComputeDevice::Cpu) return placement;
    if (options.split_ordinals.size() >= 2) return place_on_gpus(file, options, request);
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
    fill_plan_request(options, request, req);
    placement.plan = make_plan(inventory, weights, req);
    const Plan& plan = placement.plan;
    options.vram_budget = request.vram_budget;
    if (options.ple_table.tier == PleTableTier::Auto && weights.ngram_table_bytes > 0) {
        options.ple_table.tier = plan.ram_ngram_table > 0 ? PleTableTier::Ram : PleTableTier::Ssd;
    }

    const bool all_fit = plan.vram_expert_slots >= weights.expert_count;
    if (all_fit && !request.force_tiers) return placement;
    if (!plan.fits && request.expert_slots < 0) return Status::error("{}", plan_refusal(plan, file));
    placement.tiered = true;
    placement.cache_slots = request.expert_slots >= 0 ? static_cast<uint64_t>(request.expert_slots)
                                                      : std::min<uint64_t>(plan.vram_expert_slots, weights.expert_count);
    placement.summary = std::make_shared<GpuExpertTierSummary>();
    STRATA_ASSIGN_OR_RETURN(GpuExpertTierOptions tier, tier_options(file, inventory.config, request, placement));
    tier.cache_slots = placement.cache_slots;
    options.routed_experts = tiers_factory(tier, placement.summary);
    return placement;
}

}  // namespace strata
