#include "experts/gpu_step_plan.h"

#include <algorithm>

#include "core/check.h"

namespace strata {

namespace {
uint64_t values_bytes(int64_t count) { return (static_cast<uint64_t>(count) * 4 + 63) / 64 * 64; }
}  // namespace

PlanLayout::PlanLayout(int64_t pairs, int64_t max_tiles, int64_t max_sets) {
    // (64 more tile values: room the tile kernels may read past the last tile.)
    tiles = sorted + values_bytes(pairs);
    counts = tiles + values_bytes(3 * max_tiles + 64);
    weights = counts + values_bytes(max_sets);
    bytes = weights + values_bytes(pairs);
}

GpuStepPlan::GpuStepPlan(uint8_t* buffer, const PlanLayout& layout, const std::vector<std::vector<int32_t>>& pairs_by_expert,
                         const float* weights, int64_t pairs, int tile_width)
    : by_expert_(pairs_by_expert),
      weights_(weights),
      tile_width_(tile_width),
      sorted_(reinterpret_cast<int32_t*>(buffer + layout.sorted)),
      tiles_(reinterpret_cast<int32_t*>(buffer + layout.tiles)),
      counts_(reinterpret_cast<int32_t*>(buffer + layout.counts)),
      weights_out_(reinterpret_cast<float*>(buffer + layout.weights)),
      max_tiles_(static_cast<int64_t>((layout.counts - layout.tiles) / 12)),
      max_sets_(static_cast<int64_t>((layout.weights - layout.counts) / 4)) {
    STRATA_CHECK(tile_width > 0, "a plan's tiles hold at least one pair");
    std::fill(weights_out_, weights_out_ + pairs, 0.0f);
}

void GpuStepPlan::open_set(int half, bool copied_ahead) {
    sets_.push_back(LaunchSet{n_sorted_, 0, n_tiles_, 0, half, copied_ahead});
}

void GpuStepPlan::add_expert(int32_t expert, int32_t slot) {
    STRATA_CHECK(!sets_.empty(), "an expert added to a plan outside a launch set");
    const std::vector<int32_t>& list = by_expert_[static_cast<size_t>(expert)];
    for (size_t i = 0; i < list.size(); i += static_cast<size_t>(tile_width_)) {
        STRATA_CHECK(n_tiles_ < max_tiles_, "a step's plan has more tiles than its layout holds");
        const int64_t count = std::min<int64_t>(tile_width_, static_cast<int64_t>(list.size() - i));
        tiles_[3 * n_tiles_] = slot;
        tiles_[3 * n_tiles_ + 1] = static_cast<int32_t>(n_sorted_ + static_cast<int64_t>(i));
        tiles_[3 * n_tiles_ + 2] = static_cast<int32_t>(count);
        ++n_tiles_;
    }
    for (int32_t p : list) {
        sorted_[n_sorted_++] = p;
        weights_out_[p] = weights_[p];
    }
}

void GpuStepPlan::close_set() {
    LaunchSet& s = sets_.back();
    s.count = n_sorted_ - s.first;
    s.tiles = n_tiles_ - s.tile_first;
    if (s.count == 0) sets_.pop_back();
}

int64_t GpuStepPlan::add_streamed(std::span<const int32_t> streamed, const StagingRing& ring, std::vector<int32_t>& slots_out) {
    const int64_t half = ring.half;
    slots_out.assign(streamed.size(), -1);
    if (streamed.empty()) return 0;
    STRATA_CHECK(half > 0 && static_cast<int64_t>(ring.slots.size()) >= 2 * half, "experts streamed without a staging ring");
    for (size_t i = 0; i < streamed.size(); ++i) {
        const auto pos = static_cast<int64_t>(i);
        const int64_t chunk = pos / half;
        const int half_index = static_cast<int>((ring.chunk_counter + static_cast<uint64_t>(chunk)) % 2);
        if (pos % half == 0) {
            if (i > 0) close_set();
            open_set(half_index);
        }
        const int32_t slot = ring.slots[static_cast<size_t>(half_index * half + pos % half)];
        slots_out[i] = slot;
        add_expert(streamed[i], slot);
    }
    close_set();
    return (static_cast<int64_t>(streamed.size()) + half - 1) / half;
}

void GpuStepPlan::finish() {
    STRATA_CHECK(static_cast<int64_t>(sets_.size()) <= max_sets_, "a step's plan has more launch sets than its layout holds");
    for (size_t s = 0; s < sets_.size(); ++s) counts_[s] = static_cast<int32_t>(sets_[s].tiles);
}

}  // namespace strata
