// Scan steps (experts/scan_steps.h): which steps are scans, which experts are copied ahead of the
// next layer's routing, and why scans leave the cache policy alone (LRU under a cyclic scan).
#include "experts/scan_steps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "experts/expert_policy.h"

namespace strata {
namespace {

TEST(ScanSteps, ThreeQuartersOfTheLayersExpertsMakeAScan) {
    EXPECT_TRUE(is_scan_step(96, 128));
    EXPECT_FALSE(is_scan_step(95, 128));
    EXPECT_TRUE(is_scan_step(128, 128));
    EXPECT_FALSE(is_scan_step(0, 0));
    EXPECT_FALSE(is_scan_step(1, 8));
    // The header's examples: uniform routing of n tokens to 8 of 128 experts uses 1 - (1 - 1/16)^n.
    const auto used = [](int n) { return static_cast<size_t>(std::lround(128 * (1 - std::pow(1 - 8.0 / 128, n)))); };
    EXPECT_FALSE(is_scan_step(used(16), 128));  // 16 sequences decoding: ~82 experts
    EXPECT_TRUE(is_scan_step(used(32), 128));   // 32: ~112
    EXPECT_TRUE(is_scan_step(used(512), 128));  // a prompt: all
}

TEST(ScanSteps, CopiesAheadTheHottestFirstTiesByExpert) {
    std::vector<AheadCandidate> c{{4, 1.0}, {9, 7.0}, {2, 3.0}, {5, 7.0}, {1, 0.5}};
    std::vector<int32_t> out{99};
    choose_copy_ahead(c, 3, out);
    EXPECT_EQ(out, (std::vector<int32_t>{5, 9, 2}));
    choose_copy_ahead(c, 10, out);  // room for all: every candidate, in order
    EXPECT_EQ(out, (std::vector<int32_t>{5, 9, 2, 4, 1}));
    choose_copy_ahead(c, 0, out);
    EXPECT_TRUE(out.empty());
    std::vector<AheadCandidate> none;
    choose_copy_ahead(none, 4, out);
    EXPECT_TRUE(out.empty());
}

// The reason scans do not admit: a pass over 4 layers of 8 experts, each step using all of one
// layer's, with 16 slots. LRU that admits every miss evicts the layers the pass reaches next and
// hits nothing, where a cache left as filled would hit half the uses.
TEST(ScanSteps, LruUnderACyclicScanHitsNothing) {
    std::vector<std::vector<uint32_t>> steps;
    for (int pass = 0; pass < 6; ++pass) {
        for (uint32_t layer = 0; layer < 4; ++layer) {
            std::vector<uint32_t> ids;
            for (uint32_t x = 0; x < 8; ++x) ids.push_back(layer * 8 + x);
            steps.push_back(ids);
        }
    }
    LruPolicy admitting(32);
    const TraceReplay r = replay_trace(admitting, steps, 32, 16, 8);
    EXPECT_EQ(r.hits, 0u);
    EXPECT_EQ(r.misses, 6u * 32u);
}

}  // namespace
}  // namespace strata
