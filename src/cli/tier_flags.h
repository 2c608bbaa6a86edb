#pragma once
// The flags that place a MoE model on a GPU too small for it (runtime/gpu_placement.h), shared
// by `run`, `bench`, `parity` and `serve`: the VRAM budget and reserve the memory plan works
// with, and how the expert tiers behave. Without them a model that fits loads whole and one that
// does not is tiered by the plan of the card's free memory.
//
//   TierFlags tiers;  tiers.add_to(app);
//   auto placement = tiers.request(compute, n_ctx, n_batch);   // into EngineRequest (cli/engine_flags.h)
//   if (!placement) return report_failure("bench", placement.status().message());

#include <CLI/CLI.hpp>

#include <string>

#include "cli/device_flags.h"
#include "plan/units.h"
#include "runtime/gpu_placement.h"

namespace strata::cli {

struct TierFlags {
    std::string vram_budget;
    std::string vram_reserve = "512MiB";
    std::string expert_policy = "lru";
    std::string miss_lane = "auto";
    int64_t expert_slots = -1;
    std::string expert_profile;
    uint32_t expert_prefetch = kDefaultExpertPrefetch;

    void add_to(CLI::App& app) {
        app.add_option("--vram-budget", vram_budget,
                       "Use at most this much VRAM (e.g. 10GiB), as if the card were this size; with --gpus one size "
                       "for each GPU, or a list (20GiB,8GiB) for uneven cards");
        app.add_option("--vram-reserve", vram_reserve, "VRAM the plan leaves free for the driver and other programs")
            ->capture_default_str();
        app.add_option("--expert-policy", expert_policy, "Expert cache policy when experts are tiered: lru or lfu")
            ->capture_default_str();
        app.add_option("--miss-lane", miss_lane,
                       "Experts missing from VRAM: auto (CPU or streamed, by measured cost), cpu, or stream")
            ->capture_default_str();
        app.add_option("--expert-slots", expert_slots, "Tier the experts with this many VRAM cache slots (overrides the plan)");
        app.add_option("--expert-profile", expert_profile,
                       "A routing profile from `strata profile`: its hottest experts start in the VRAM cache");
        app.add_option("--expert-prefetch", expert_prefetch,
                       "Decode: copy at most this many of the next layer's likely experts to VRAM ahead of its routing; "
                       "how many below that follows the measured link, CPU and chain times (0: off)")
            ->capture_default_str()
            ->check(CLI::Range(0, 64));
    }

    // The placement these flags ask for, with the context and batch the plan reserves for.
    Result<GpuPlacementRequest> request(const ComputeOptions& compute, int64_t n_ctx, int64_t n_batch) const {
        GpuPlacementRequest req;
        req.tier_tuning = environment_tuning().tiers;
        if (vram_budget.find(',') != std::string::npos) {
            if (compute.split_ordinals.size() < 2) {
                return Status::error("--vram-budget {}: a list of sizes is for a model split over --gpus", vram_budget);
            }
            size_t at = 0;
            while (true) {
                const size_t comma = vram_budget.find(',', at);
                auto b = parse_byte_size(vram_budget.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
                if (!b) return Status::error("--vram-budget {}: {}", vram_budget, b.status().message());
                req.vram_budgets.push_back(*b);
                if (comma == std::string::npos) break;
                at = comma + 1;
            }
        } else if (!vram_budget.empty()) {
            auto b = parse_byte_size(vram_budget);
            if (!b) return Status::error("--vram-budget: {}", b.status().message());
            req.vram_budget = *b;
        }
        auto r = parse_byte_size(vram_reserve);
        if (!r) return Status::error("--vram-reserve: {}", r.status().message());
        req.vram_reserve = *r;
        req.n_ctx = n_ctx;
        req.n_batch = n_batch;
        const auto policy = policy_kind_from_name(expert_policy);
        if (!policy) return Status::error("--expert-policy: expected lru or lfu, got {:?}", expert_policy);
        const auto lane = miss_lane_from_name(miss_lane);
        if (!lane) return Status::error("--miss-lane: expected auto, cpu or stream, got {:?}", miss_lane);
        req.expert_policy = *policy;
        req.miss_lane = *lane;
        req.expert_slots = expert_slots;
        req.force_tiers = expert_slots >= 0;
        req.expert_profile = expert_profile;
        req.expert_prefetch = expert_prefetch;
        return req;
    }
};

}  // namespace strata::cli
