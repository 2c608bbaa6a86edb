#pragma once
// The GPU's part of one MoE layer step of the expert tiers (gpu_expert_tiers_impl.h): which
// pairs (token, choice) each set of GPU launches computes, from which VRAM slot. The host writes it
// into one buffer that a kernel reads through the GPU's mapping of page-locked memory (PlanLayout):
//   sorted  - the pairs' positions, grouped by expert;
//   tiles   - per tile of up to tile_width pairs of one expert: slot, first sorted position, count;
//   counts  - the tile count of each launch set;
//   weights - each pair's routing weight; zero for pairs the GPU does not compute (the CPU lane's),
//             so the combine adds nothing for them.
// Launch sets, in the order the GPU runs them: the hits (with the experts copied ahead for this
// step), the experts streamed ahead after a scan step, then the streamed experts in chunks of one
// staging-ring half, alternating halves, so that the copies into one half overlap the compute
// from the other. Free of GPU code, so it is tested on any machine (tests/experts).
//
//   const PlanLayout layout(pairs, max_tiles, max_sets);
//   GpuStepPlan plan(buffer, layout, pairs_by_expert, weights, pairs, tile_width);
//   plan.open_set(kHitsSet);  for (hit) plan.add_expert(x, slot);  plan.close_set();
//   plan.add_streamed(experts, ring, chunk_counter);              // the streamed chunks
//   plan.finish();                                                // the tile counts
//   for (const LaunchSet& s : plan.sets()) ...

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

// Where the parts of a step's plan lie in its buffer (bytes; every value is 4 bytes; each part is
// 64-byte aligned).
struct PlanLayout {
    uint64_t sorted = 0, tiles = 0, counts = 0, weights = 0, bytes = 0;
    // pairs: the step's (token, choice) pairs; max_tiles: an upper bound on tiles (pairs + the
    // experts used); max_sets: on launch sets.
    PlanLayout(int64_t pairs, int64_t max_tiles, int64_t max_sets);
};

// A group of experts computed by one set of GPU launches: the hits, or one chunk of streamed
// experts (whose copies it waits for).
struct LaunchSet {
    int64_t first = 0, count = 0;        // range of sorted positions
    int64_t tile_first = 0, tiles = 0;   // range of the tile table
    int half = -1;                       // the staging half it streams through; -1: hits
    bool copied_ahead = false;           // its copies were queued a step ago (scan steps)
};

// The staging ring: two halves of `half` slots each; a step's streamed chunks alternate between
// them, starting with half (chunk_counter % 2).
struct StagingRing {
    std::span<const int32_t> slots;  // 2 * half slots: half 0, then half 1
    int64_t half = 0;
    uint64_t chunk_counter = 0;      // chunks streamed before this step
};

class GpuStepPlan {
public:
    static constexpr int kHitsSet = -1;

    // buffer: layout.bytes; pairs_by_expert[x]: expert x's pair positions; weights: the routing
    // weight of each of the step's `pairs` pairs. Every weight in the plan starts at zero.
    GpuStepPlan(uint8_t* buffer, const PlanLayout& layout, const std::vector<std::vector<int32_t>>& pairs_by_expert,
                const float* weights, int64_t pairs, int tile_width);

    // A launch set streaming through staging half `half` (kHitsSet: reading cache slots or slots
    // already copied); experts added until close_set() belong to it. An empty set is dropped.
    void open_set(int half, bool copied_ahead = false);
    void add_expert(int32_t expert, int32_t slot);
    void close_set();
    // The streamed experts, in order, in chunks of one ring half each: each goes to the next slot
    // of its chunk's half (slots_out[i]: streamed[i]'s). Returns the number of chunks.
    int64_t add_streamed(std::span<const int32_t> streamed, const StagingRing& ring, std::vector<int32_t>& slots_out);
    // Writes each launch set's tile count.
    void finish();

    const std::vector<LaunchSet>& sets() const { return sets_; }
    int64_t sorted_pairs() const { return n_sorted_; }
    int64_t tiles() const { return n_tiles_; }

    const int32_t* sorted() const { return sorted_; }
    const int32_t* tile_table() const { return tiles_; }
    const int32_t* set_tile_counts() const { return counts_; }
    const float* pair_weights() const { return weights_out_; }

private:
    const std::vector<std::vector<int32_t>>& by_expert_;
    const float* weights_;
    int tile_width_;
    int32_t* sorted_;
    int32_t* tiles_;
    int32_t* counts_;
    float* weights_out_;
    int64_t max_tiles_;
    int64_t max_sets_;
    int64_t n_sorted_ = 0, n_tiles_ = 0;
    std::vector<LaunchSet> sets_;
};

}  // namespace strata
