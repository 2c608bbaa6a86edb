#pragma once
// Where a model's weights go when it runs on a GPU, decided by the memory planner before loading
// (ARCHITECTURE.md decision 5) and then followed: when every routed expert fits in VRAM beside the
// dense weights, KV cache and workspaces, the model loads whole; otherwise the plan's expert slots
// become the VRAM cache of the expert tiers (experts/gpu_expert_tiers.h) and the rest is read from
// RAM. A plan that does not fit is refused here, with the planner's reasons and suggestions.
//
//   GpuPlacementRequest req;  req.vram_budget = 10 * kGiB;  req.n_ctx = 4096;
//   STRATA_ASSIGN_OR_RETURN(GpuPlacement p, place_on_gpu(gguf, compute_options, req));
//   fmt::print("{}\n", p.describe());     // the plan in one line; tiers filled in after loading

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/gpu/gpu_model.h"
#include "core/status.h"
#include "experts/gpu_expert_tiers.h"
#include "gguf/reader.h"
#include "plan/planner.h"

namespace strata {

struct GpuPlacementRequest {
    uint64_t vram_budget = 0;            // 0: the card's free memory
    // Several GPUs (--gpus): one budget per GPU in their order (uneven cards: --vram-budget
    // 20GiB,8GiB); empty: vram_budget for each.
    std::vector<uint64_t> vram_budgets;
    uint64_t vram_reserve = 512 * kMiB;
    int64_t n_ctx = 4096;
    int64_t n_batch = 512;
    PolicyKind expert_policy = PolicyKind::Lru;  // see GpuExpertTierOptions
    MissLane miss_lane = MissLane::Auto;
    int64_t expert_slots = -1;           // >= 0: this many cache slots (on each GPU of a split) instead of the plan's (tests)
    bool force_tiers = false;            // tier the experts even when they all fit (tests)
    std::string expert_profile;          // a `strata profile` file: its hottest experts start in VRAM
    uint32_t expert_prefetch = kDefaultExpertPrefetch;  // see GpuExpertTierOptions::prefetch
    int64_t staging_slots = -1;          // >= 2: the streaming ring's size instead of the plan's (tests)
    TierTuning tier_tuning;              // see GpuExpertTierOptions::tuning
};

struct GpuPlacement {
    Plan plan;
    bool tiered = false;
    uint64_t cache_slots = 0;  // over every GPU of a layer split
    // Filled while the model runs (tiered only); read under *stats_mutex.
    std::shared_ptr<GpuExpertTierStats> stats;
    std::shared_ptr<std::mutex> stats_mutex;
    std::shared_ptr<GpuExpertTierSummary> summary;  // filled when the tiers are made (at load)
    // --split layer: one summary per GPU whose experts are tiered (in the plan's GPU order), null
    // for a GPU that holds all of its layers' experts.
    std::vector<std::shared_ptr<GpuExpertTierSummary>> share_summaries;
    std::string describe() const;
    // Whether describe() says more than the model's device name does: tiers, or a layer split.
    bool worth_describing() const { return tiered || !plan.gpu_shares.empty(); }
};

// Plans the model on options.gpu_ordinal's card and, when the experts must be tiered, sets
// options.vram_budget and options.routed_experts so that load_model_on follows the plan. Does
// nothing for CPU runs and models without routed experts (tiered stays false).
// With options.split_ordinals (--gpus with --split layer) it plans every GPU with its own memory
// and sets options.layer_split: each GPU's layers, budget and, where its layers' experts do not
// all fit, its own expert tiers. A plan that does not fit is refused, for dense models too.
Result<GpuPlacement> place_on_gpu(const GgufFile& file, ComputeOptions& options, const GpuPlacementRequest& request);

}  // namespace strata
