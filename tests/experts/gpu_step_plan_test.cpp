// The GPU part of a tiers step (experts/gpu_step_plan.h): launch sets in order, tiles of at most
// tile_width pairs, streamed chunks alternating ring halves, weights only for the GPU's pairs.
// Expected values are worked out by hand from the header's rules.
#include "experts/gpu_step_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>


namespace strata {
namespace {

struct PlanFixture {
    std::vector<std::vector<int32_t>> by_expert;
    std::vector<float> weights;
    std::vector<uint8_t> buffer;

    PlanFixture(int n_expert, const std::vector<int32_t>& ids) : by_expert(static_cast<size_t>(n_expert)) {
        for (size_t p = 0; p < ids.size(); ++p) {
            by_expert[static_cast<size_t>(ids[p])].push_back(static_cast<int32_t>(p));
            weights.push_back(0.5f + static_cast<float>(p));  // distinct, non-zero
        }
    }
    GpuStepPlan make(const PlanLayout& layout, int tile_width) {
        buffer.assign(layout.bytes, 0xAB);  // garbage the plan must overwrite where it is read
        return GpuStepPlan(buffer.data(), layout, by_expert, weights.data(), static_cast<int64_t>(weights.size()), tile_width);
    }
};

std::vector<int32_t> tile(const GpuStepPlan& p, int64_t t) {
    return {p.tile_table()[3 * t], p.tile_table()[3 * t + 1], p.tile_table()[3 * t + 2]};
}

TEST(GpuStepPlan, LayoutPartsAreAlignedAndApart) {
    const PlanLayout l(512 * 8, 512 * 8 + 128, 129);
    EXPECT_EQ(l.sorted, 0u);
    for (uint64_t part : {l.tiles, l.counts, l.weights, l.bytes}) EXPECT_EQ(part % 64, 0u);
    EXPECT_GE(l.tiles - l.sorted, 4096u * 4);
    EXPECT_GE(l.counts - l.tiles, (3u * (4096 + 128) + 64) * 4);
    EXPECT_GE(l.weights - l.counts, 129u * 4);
    EXPECT_GE(l.bytes - l.weights, 4096u * 4);
}

// One decode token routed to 8 experts: 2 hits, 1 copied ahead, 3 streamed, 2 on the CPU.
TEST(GpuStepPlan, DecodeStepHitsThenOneStreamedChunk) {
    //                        pair: 0  1  2  3  4  5  6  7
    PlanFixture f(16, std::vector<int32_t>{9, 2, 5, 14, 7, 1, 12, 3});
    const PlanLayout layout(8, 16, 9);
    GpuStepPlan plan = f.make(layout, 1);
    plan.open_set(GpuStepPlan::kHitsSet);
    plan.add_expert(2, 40);  // cache slot 40
    plan.add_expert(9, 41);
    plan.add_expert(5, 103);  // copied ahead into ring slot 103
    plan.close_set();
    const std::vector<int32_t> ring{100, 101, 102, 103, 104, 105, 106, 107};
    std::vector<int32_t> slots;
    const std::vector<int32_t> streamed{7, 12, 14};
    EXPECT_EQ(plan.add_streamed(streamed, StagingRing{ring, 4, 3}, slots), 1);
    plan.finish();

    EXPECT_EQ(slots, (std::vector<int32_t>{104, 105, 106}));  // chunk 0 in half (3 + 0) % 2 = 1
    ASSERT_EQ(plan.sets().size(), 2u);
    EXPECT_EQ(plan.sets()[0].half, GpuStepPlan::kHitsSet);
    EXPECT_EQ(plan.sets()[0].first, 0);
    EXPECT_EQ(plan.sets()[0].count, 3);
    EXPECT_EQ(plan.sets()[1].half, 1);
    EXPECT_EQ(plan.sets()[1].first, 3);
    EXPECT_EQ(plan.sets()[1].count, 3);
    EXPECT_EQ(plan.sets()[1].tile_first, 3);
    EXPECT_EQ(plan.sorted_pairs(), 6);
    EXPECT_EQ(std::vector<int32_t>(plan.sorted(), plan.sorted() + 6), (std::vector<int32_t>{1, 0, 2, 4, 6, 3}));
    EXPECT_EQ(tile(plan, 0), (std::vector<int32_t>{40, 0, 1}));
    EXPECT_EQ(tile(plan, 2), (std::vector<int32_t>{103, 2, 1}));
    EXPECT_EQ(tile(plan, 5), (std::vector<int32_t>{106, 5, 1}));
    EXPECT_EQ(plan.set_tile_counts()[0], 3);
    EXPECT_EQ(plan.set_tile_counts()[1], 3);
    // The CPU's pairs (experts 1 and 3: pairs 5 and 7) weigh nothing on the GPU.
    for (int p : {0, 1, 2, 3, 4, 6}) EXPECT_EQ(plan.pair_weights()[p], f.weights[static_cast<size_t>(p)]) << p;
    EXPECT_EQ(plan.pair_weights()[5], 0.0f);
    EXPECT_EQ(plan.pair_weights()[7], 0.0f);
}

TEST(GpuStepPlan, AnExpertsPairsSplitIntoTilesOfTheWidth) {
    PlanFixture f(4, std::vector<int32_t>{3, 3, 1, 3, 3, 3});  // expert 3: pairs 0, 1, 3, 4, 5
    GpuStepPlan plan = f.make(PlanLayout(6, 8, 3), 2);
    plan.open_set(GpuStepPlan::kHitsSet);
    plan.add_expert(3, 7);
    plan.close_set();
    plan.finish();
    ASSERT_EQ(plan.tiles(), 3);
    EXPECT_EQ(tile(plan, 0), (std::vector<int32_t>{7, 0, 2}));
    EXPECT_EQ(tile(plan, 1), (std::vector<int32_t>{7, 2, 2}));
    EXPECT_EQ(tile(plan, 2), (std::vector<int32_t>{7, 4, 1}));
    EXPECT_EQ(std::vector<int32_t>(plan.sorted(), plan.sorted() + 5), (std::vector<int32_t>{0, 1, 3, 4, 5}));
    EXPECT_EQ(plan.pair_weights()[2], 0.0f);  // expert 1 is not in the plan
}

// A prompt's misses wrap around a ring of two halves of 2 slots: chunks alternate halves, starting
// with the half the chunk counter points to, and an empty hit set is dropped.
TEST(GpuStepPlan, StreamedChunksAlternateHalvesFromTheCounter) {
    PlanFixture f(8, std::vector<int32_t>{0, 1, 2, 3, 4});
    GpuStepPlan plan = f.make(PlanLayout(5, 10, 6), 4);
    plan.open_set(GpuStepPlan::kHitsSet);
    plan.close_set();
    const std::vector<int32_t> ring{20, 21, 30, 31};
    std::vector<int32_t> slots;
    EXPECT_EQ(plan.add_streamed(std::vector<int32_t>{0, 1, 2, 3, 4}, StagingRing{ring, 2, 1}, slots), 3);
    plan.finish();
    EXPECT_EQ(slots, (std::vector<int32_t>{30, 31, 20, 21, 30}));
    ASSERT_EQ(plan.sets().size(), 3u);
    EXPECT_EQ(plan.sets()[0].half, 1);
    EXPECT_EQ(plan.sets()[1].half, 0);
    EXPECT_EQ(plan.sets()[2].half, 1);
    EXPECT_EQ(plan.sets()[2].first, 4);
    EXPECT_EQ(plan.sets()[2].count, 1);
    EXPECT_EQ(plan.set_tile_counts()[2], 1);
}

TEST(GpuStepPlan, StreamedAheadSetIsMarkedAndNothingStreamedIsNoChunk) {
    PlanFixture f(4, std::vector<int32_t>{2, 0});
    GpuStepPlan plan = f.make(PlanLayout(2, 4, 3), 1);
    plan.open_set(1, true);
    plan.add_expert(2, 55);
    plan.close_set();
    std::vector<int32_t> slots{9, 9};
    EXPECT_EQ(plan.add_streamed({}, StagingRing{}, slots), 0);
    EXPECT_TRUE(slots.empty());
    plan.finish();
    ASSERT_EQ(plan.sets().size(), 1u);
    EXPECT_TRUE(plan.sets()[0].copied_ahead);
    EXPECT_EQ(plan.sets()[0].half, 1);
    EXPECT_EQ(plan.sorted_pairs(), 1);
}

TEST(GpuStepPlan, AnExpertOutsideASetIsAnError) {
    PlanFixture f(2, std::vector<int32_t>{0});
    GpuStepPlan plan = f.make(PlanLayout(1, 2, 1), 1);
    EXPECT_DEATH(plan.add_expert(0, 1), "outside a launch set");
}

}  // namespace
}  // namespace strata
