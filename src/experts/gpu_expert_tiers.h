#pragma once
// Expert tiers beside a GPU (ARCHITECTURE.md decision 4): the routed experts of a MoE model that
// does not fit in VRAM. Every expert's home is the mapped GGUF, page-locked in RAM when the OS
// allows (so the copy engine reads it at full link speed without a staging copy). A pool of VRAM
// slots holds copies: most are the cache (residency per (layer, expert), an ExpertPolicy admits
// and evicts), a few form the staging ring that streamed experts pass through.
//
// Per MoE layer and batch, after the GPU has routed the tokens:
//   - a selected expert in a cache slot (a hit) is computed by the GPU kernels;
//   - a miss is either computed by the CPU workers straight from RAM, or copied into a staging
//     slot on the copy stream and computed by the GPU once it lands. The split balances the two
//     lanes with costs measured at start-up (link bandwidth) and refined as it runs (CPU seconds
//     per expert and per token): misses with few tokens go to the CPU until the CPU's share
//     takes as long as copying the rest. Decode (one token) thus uses DRAM and PCIe bandwidth at
//     once; prompts stream most experts, double-buffered, while the CPU takes the small ones;
//   - the CPU part and the GPU part run at the same time; the GPU reads the CPU's sum where it
//     lies in page-locked memory and adds it to the residual on its stream. A streamed expert the
//     policy admits keeps its slot (the victim's slot joins the ring instead), so admissions cost
//     no extra copy.
//   - a step that uses most of its layer's experts (a scan step: a prompt batch; scan_steps.h)
//     leaves the cache policy alone, and copies the next layer's uncached experts ahead of its
//     routing, so that the link does not wait for the GPU's routing between layers. Nothing small
//     the GPU needs at once (a step's plan, the CPU's sum) goes by a copy engine, where it would
//     queue behind the experts being streamed: kernels read it through the mapping.
//   - STRATA_TIERS_TIMELINE=N prints the N-th prompt pass's events on both streams (a diagnostic).
//
//   GpuExpertTierOptions o;  o.cache_slots = plan.vram_expert_slots;
//   auto tiers = make_gpu_expert_tiers(gguf, gpu_ctx, o);   // fills the cache, measures the link
//   opt.routed_experts = ...;                              // see backend/gpu/gpu_routed_experts.h

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/gpu/gpu_routed_experts.h"
#include "experts/expert_policy.h"
#include "experts/expert_store.h"
#include "experts/miss_lanes.h"
#include "experts/tier_tuning.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/moe_routing.h"

namespace strata {

// Counters and time split, shared with whoever reports them (strata bench, /metrics).
struct GpuExpertTierStats {
    uint64_t layer_steps = 0;
    uint64_t expert_uses = 0;      // (layer step, expert) pairs
    uint64_t hits = 0;             // ... found in a cache slot
    uint64_t cpu_experts = 0;      // ... computed by the CPU
    uint64_t streamed_experts = 0; // ... copied to a staging slot and computed by the GPU
    uint64_t routed_pairs = 0, hit_pairs = 0, cpu_pairs = 0, streamed_pairs = 0;
    uint64_t admissions = 0;       // streamed experts kept as residents
    uint64_t bytes_streamed = 0;   // host → VRAM
    uint64_t bytes_cpu = 0;        // expert bytes the CPU read
    uint64_t prefetched = 0;       // experts copied ahead (their bytes count in bytes_streamed)
    uint64_t prefetch_offered = 0; // ... of those, ones whose layer came (a step looked at them)
    uint64_t prefetch_hits = 0;    // ... and used by it (counted in streamed_experts too)
    uint64_t lanes_awaited_by_gpu = 0;  // CPU lanes whose sum the GPU waited for (early combine)
    uint64_t warmed_experts = 0;   // experts a CPU lane read into cache for the next layer
    uint64_t warm_offered = 0;     // ... of those, ones whose layer came (a step looked at them)
    uint64_t warm_used = 0;        // ... and that step's CPU lane computed
    double seconds_wait_gpu = 0;   // host waiting for the GPU's routing (the GPU's share of a layer)
    double seconds_cpu = 0;        // host computing CPU experts (overlaps the GPU and the copies)
    double seconds_plan = 0;       // host bookkeeping: grouping, decisions, plan upload, launches (runs
                                   // while the CPU lane computes, when the GPU has a part too)
    double seconds_link = 0;       // the link copying experts (the copy stream's busy time, timed on the GPU)
    // The serial path between a decode step's CPU lanes (overlapped runs only): from a lane's end
    // to the next layer's routing on the host, from the routing to the next lane's start call,
    // and from that call to the lane's first instruction.
    double seconds_lane_to_routing = 0, seconds_routing_to_lane = 0, seconds_lane_wake = 0;
    // Of routing → lane start: awaiting the last lane (stopping its warming and joining it).
    double seconds_lane_join = 0;
    double cpu_expert_us = 0;      // the CPU cost model: one expert, one token (measured at the first step)
    double cpu_token_us = 0;       // ... each further token of the same expert
    double cpu_cost_scale = 1;     // ... times this correction learnt from the steps since
    double decode_cpu_share = 0;   // share of a decode step's misses the CPU takes (feedback-tuned)
    double hit_rate() const { return expert_uses ? static_cast<double>(hits) / static_cast<double>(expert_uses) : 0.0; }
    // Counters and seconds: this + (after - before), field by field (a report over several timed
    // windows); the cost-model values are taken from `after`.
    void add_window(const GpuExpertTierStats& before, const GpuExpertTierStats& after);
};

// The most experts a decode step copies ahead for the next layer (--expert-prefetch); how many it
// copies below that comes from measured costs (experts/copies_ahead.h). Experts copied ahead go by
// the link, so the count also caps the CPU lane's share of the misses. A fixed 3 was best with
// every expert in RAM (3 against 4 and 2: bench/results/2026-11-30-cpu-prefetch/), but with the
// uniform synthetic model it left the link late at 10 GiB (2 was 1.15x faster) and 16 GiB:
// bench/results/2026-12-01-chain-signals/.
inline constexpr uint32_t kDefaultExpertPrefetch = 3;

struct GpuExpertTierOptions {
    uint64_t cache_slots = 0;    // VRAM cache slots (the memory plan's vram_expert_slots)
    uint64_t staging_slots = 16; // the streaming ring (two halves); at least 2
    PolicyKind policy = PolicyKind::Lru;
    double lfu_decay = 0.9;
    MissLane miss_lane = MissLane::Auto;  // experts/miss_lanes.h
    bool pin_file = true;        // page-lock the mapped expert tensors (else copies are staged)
    // The most bytes page-locking may take (experts/host_pinning.h; page_lock_limit() in
    // plan/host_ram.h: about half of RAM under Windows' WDDM); UINT64_MAX: no limit of the OS's own.
    uint64_t page_lock_limit = UINT64_MAX;
    // One-token steps copy up to this many of the next layer's likely experts (its router's pick
    // for this layer's input) ahead, into free staging slots; 0: off.
    uint32_t prefetch = kDefaultExpertPrefetch;
    // The cache's starting residents, in this order until the slots run out (hottest_first of a
    // routing profile, `--expert-profile`); slots left over get an equal share of every layer.
    std::vector<ExpertKey> hot_set;
    // Under --split layer each GPU tiers the experts of its own layers: [layer_begin, layer_end).
    // Default: every MoE layer of the file.
    uint32_t layer_begin = 0, layer_end = UINT32_MAX;
    // The experts' activation: gpt-oss's clamped SwiGLU (with the per-expert biases its file has).
    ExpertActivation activation = ExpertActivation::SwiGlu;
    TierTuning tuning;  // switches between measured alternatives (experts/tier_tuning.h)
    std::shared_ptr<GpuExpertTierStats> stats;  // optional: filled as the tiers run
    std::shared_ptr<std::mutex> stats_mutex;    // guards *stats when another thread reads it
};

// Everything about the tiers that bench and the server print at start-up.
struct GpuExpertTierSummary {
    uint64_t moe_layers = 0, experts_per_layer = 0, slot_bytes = 0;
    uint64_t cache_slots = 0, staging_slots = 0;
    bool file_pinned = false;          // every layer's experts page-locked
    std::string pin_note;              // what was locked and, when not all, why
    std::string mapping_note;          // what the GPU's mapping of page-locked memory does (mapped_alias.h)
    double link_gbps = 0;              // host → VRAM, measured at start-up
    std::string describe() const;
};

// Makes the tiers for `file`'s routed experts on the context's device. The VRAM it takes comes
// from the context's pool (so --vram-budget counts it). Fails when the pool cannot give the slots.
Result<std::unique_ptr<gpu::RoutedExperts>> make_gpu_expert_tiers(const GgufFile& file, gpu::GpuContext& ctx,
                                                                  const GpuExpertTierOptions& options,
                                                                  GpuExpertTierSummary* summary = nullptr);

}  // namespace strata
