#pragma once
// Scan steps: MoE layer steps that use most of their layer's experts (a prompt batch, or many
// sequences decoding at once). Two things follow for the GPU expert tiers
// (gpu_expert_tiers_impl.h):
// - The next layer's step will use nearly all of its experts too, so those not in VRAM are known
//   before its routing: they are copied ahead, across the layer boundary, and the link stays busy
//   while the GPU finishes this layer and routes the next (else it idles for that gap every layer).
// - The step says nothing about which experts are hot (it touches nearly every one), and admitting
//   its streamed experts into the cache would evict ones the same pass needs a few layers later:
//   LRU under a cyclic scan larger than its slots hits nothing. So scan steps leave the cache
//   policy alone (no use recorded, nothing admitted); decode steps shape the cache.
//
//   if (is_scan_step(used.size(), n_expert)) { ... choose_copy_ahead(candidates, half, ahead); }

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

// The share of a layer's experts a step must use to be a scan. Uniform routing of n tokens to k of
// E experts uses 1 - (1 - k/E)^n of them: 16 sequences at k/E = 8/128 use 64% (still decode
// traffic, shaping the cache), 32 use 87%, a 512-token prompt all.
inline constexpr double kScanCoverage = 0.75;

bool is_scan_step(size_t experts_used, size_t experts_per_layer, double coverage = kScanCoverage);

struct AheadCandidate {
    int32_t expert = 0;
    double heat = 0;  // the cache policy's ExpertPolicy::heat
};

// Of `candidates` (the next layer's experts not in VRAM; reordered here), the `room` to copy ahead
// into `out`, hottest first: the CPU lane takes the coldest of the misses that are left. Ties go by
// expert id, so the choice is reproducible.
void choose_copy_ahead(std::vector<AheadCandidate>& candidates, size_t room, std::vector<int32_t>& out);

}  // namespace strata
