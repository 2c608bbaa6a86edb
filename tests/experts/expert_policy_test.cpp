// Admission/eviction policies on hand-computed traces (exact eviction orders) and on synthetic
// routing traces (a stationary Zipf hot set, and a hot set that moves): the hit rates the cache
// would reach, and which policy wins where.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "experts/expert_policy.h"

namespace strata {
namespace {

using Trace = std::vector<std::vector<uint32_t>>;

// One key per step, 2 slots. Hand-computed: A B admitted; A hits (A now newest); C evicts B;
// B evicts A; D evicts C.
TEST(LruPolicy, EvictsLeastRecentlyUsedInOrder) {
    const Trace trace = {{0}, {1}, {0}, {2}, {1}, {3}};
    LruPolicy lru(4);
    const TraceReplay r = replay_trace(lru, trace, 4, /*slots=*/2, /*max_copies=*/8);
    EXPECT_EQ(r.hits, 1u);
    EXPECT_EQ(r.misses, 5u);
    EXPECT_EQ(r.evictions, (std::vector<uint32_t>{1, 0, 2}));
    EXPECT_EQ(r.admissions, (std::vector<uint32_t>{0, 1, 2, 1, 3}));
}

// Experts of the step being computed are all equally recent: a miss never evicts one of them.
TEST(LruPolicy, NeverEvictsAnExpertOfTheSameStep) {
    const Trace trace = {{0, 1}, {0, 1, 2}};
    LruPolicy lru(3);
    const TraceReplay r = replay_trace(lru, trace, 3, 2, 8);
    EXPECT_EQ(r.hits, 2u);
    EXPECT_TRUE(r.evictions.empty());
    EXPECT_EQ(r.admissions, (std::vector<uint32_t>{0, 1}));
}

// The copy budget: one copy per step fills 4 slots one expert at a time.
TEST(LruPolicy, CopyBudgetLimitsAdmissionsPerStep) {
    const Trace trace = {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
    LruPolicy lru(3);
    const TraceReplay r = replay_trace(lru, trace, 3, 4, /*max_copies=*/1);
    EXPECT_EQ(r.admissions, (std::vector<uint32_t>{0, 1, 2}));
    EXPECT_EQ(r.hits, 0u + 1 + 2 + 3);
    EXPECT_EQ(r.misses, 3u + 2 + 1 + 0);
}

// Two warm experts used three steps running, then a one-off. LRU evicts a warm one for it (ties
// by id: 0) and pays a miss to get 0 back; LFU with decay 3/4 keeps both: the warm scores
// (1 + 3/4 + 9/16 = 2.3125, decayed to 1.734 at step 4) beat the newcomer's 1.
TEST(LfuDecayPolicy, OneOffDoesNotFlushWarmExperts) {
    const Trace trace = {{0, 1}, {0, 1}, {0, 1}, {2}, {0, 1}};
    LruPolicy lru(3);
    const TraceReplay l = replay_trace(lru, trace, 3, 2, 8);
    EXPECT_EQ(l.evictions, (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(l.hits, 5u);
    LfuDecayPolicy lfu(3, 0.75);
    const TraceReplay f = replay_trace(lfu, trace, 3, 2, 8);
    EXPECT_TRUE(f.evictions.empty());
    EXPECT_EQ(f.hits, 6u);
    EXPECT_DOUBLE_EQ(lfu.score(0), 2.3125 * 0.75 * 0.75 + 1.0);  // decayed at steps 4 and 5, used at 5
    EXPECT_DOUBLE_EQ(lfu.score(2), 0.75);
}

// Heat orders experts as each policy would keep them: LRU by the step of last use (never used:
// coldest), LFU-decay by its decayed score.
TEST(ExpertPolicyHeat, RanksAsThePolicyKeeps) {
    LruPolicy lru(4);
    lru.record_use(std::vector<uint32_t>{2});
    lru.record_use(std::vector<uint32_t>{0, 2});
    lru.record_use(std::vector<uint32_t>{1});
    EXPECT_LT(lru.heat(3), lru.heat(0));  // never used
    EXPECT_LT(lru.heat(0), lru.heat(1));  // step 2 before step 3
    EXPECT_EQ(lru.heat(0), lru.heat(2));  // both last used at step 2
    LfuDecayPolicy lfu(3, 0.5);
    lfu.record_use(std::vector<uint32_t>{0, 1});
    lfu.record_use(std::vector<uint32_t>{0});
    EXPECT_GT(lfu.score(0), lfu.score(1));  // 1.5 against 0.5
    EXPECT_GT(lfu.heat(0), lfu.heat(1));
    EXPECT_GT(lfu.score(1), lfu.score(2));  // never used: 0
    EXPECT_GT(lfu.heat(1), lfu.heat(2));
    // Scores last updated at different steps: 2 uses at steps 3 and 4 (1.5, so 0.75 at step 5)
    // against one at step 5 (1). Heat ranks them as their scores do, then and two steps later.
    LfuDecayPolicy later(2, 0.5);
    for (const std::vector<uint32_t>& step : {std::vector<uint32_t>{}, {}, {0}, {0}, {1}}) later.record_use(step);
    EXPECT_DOUBLE_EQ(later.score(0), 0.75);
    EXPECT_DOUBLE_EQ(later.score(1), 1.0);
    EXPECT_LT(later.heat(0), later.heat(1));
    later.record_use(std::vector<uint32_t>{}), later.record_use(std::vector<uint32_t>{});
    EXPECT_LT(later.heat(0), later.heat(1));
    later.record_use(std::vector<uint32_t>{0});  // step 8: 0.75 / 8 + 1 against 1 / 8
    EXPECT_GT(later.heat(0), later.heat(1));
}

// Decay makes old popularity fade: after the hot set moves, the new experts overtake.
// Scores with decay 1/2, 1 slot: expert 0 used at steps 1-3 (1.75); expert 1 at steps 4, 5.
// Step 4: 1 (1.0) vs 0 (0.875) → evict 0. Plain LFU (decay 1) would keep 0 (3 > 1, 3 > 2).
TEST(LfuDecayPolicy, DecayFollowsAShiftingHotSet) {
    const Trace trace = {{0}, {0}, {0}, {1}, {1}};
    LfuDecayPolicy decayed(2, 0.5);
    const TraceReplay d = replay_trace(decayed, trace, 2, 1, 8);
    EXPECT_EQ(d.evictions, (std::vector<uint32_t>{0}));
    EXPECT_EQ(d.hits, 3u);  // steps 2, 3, 5
    LfuDecayPolicy plain(2, 1.0);
    const TraceReplay p = replay_trace(plain, trace, 2, 1, 8);
    EXPECT_TRUE(p.evictions.empty());
    EXPECT_EQ(p.hits, 2u);
}

// A routing-like trace: each step picks `k` distinct experts of `n` by a Zipf(s) law whose ranks
// are mapped to experts through `perm` (which the shifting trace changes). Sampling from the
// mt19937 stream directly (not std::discrete_distribution) keeps the trace the same everywhere.
Trace routing_trace(size_t n, size_t k, size_t steps, double s, size_t shift_every, uint32_t seed) {
    std::vector<double> cdf(n);
    double total = 0;
    for (size_t r = 0; r < n; ++r) cdf[r] = (total += 1.0 / std::pow(static_cast<double>(r + 1), s));
    std::mt19937 rng(seed);
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    Trace trace;
    for (size_t step = 0; step < steps; ++step) {
        if (shift_every && step > 0 && step % shift_every == 0)  // the hot set moves by n/4 ranks
            std::rotate(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(n / 4), perm.end());
        std::vector<uint32_t> picked;
        while (picked.size() < k) {
            const double u = static_cast<double>(rng()) / 4294967296.0 * total;
            const size_t rank = static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
            const uint32_t ex = perm[std::min(rank, n - 1)];
            if (std::find(picked.begin(), picked.end(), ex) == picked.end()) picked.push_back(ex);
        }
        trace.push_back(picked);
    }
    return trace;
}

struct Rates {
    double lru, lfu_decay, lfu_plain;
};
Rates measure(const Trace& trace, size_t n, size_t slots, const char* label) {
    LruPolicy lru(n);
    LfuDecayPolicy lfu(n, 0.95), plain(n, 1.0);
    const Rates r{replay_trace(lru, trace, n, slots, 4).hit_rate(), replay_trace(lfu, trace, n, slots, 4).hit_rate(),
                  replay_trace(plain, trace, n, slots, 4).hit_rate()};
    std::printf("[ hit rate ] %s: lru %.4f  lfu-decay(0.95) %.4f  lfu(1.0) %.4f\n", label, r.lru, r.lfu_decay, r.lfu_plain);
    return r;
}

// 64 experts, 8 routed per step, 16 slots (a quarter), Zipf s = 1: a stationary hot set is what
// frequency counting is for, so LFU beats LRU, and decay costs little (a few points: it forgets
// some of the true ranking).
TEST(PolicyTraces, ZipfFavoursFrequency) {
    const Trace trace = routing_trace(64, 8, 4000, 1.0, 0, 7);
    const Rates r = measure(trace, 64, 16, "zipf s=1, 64 experts, top-8, 16 slots");
    EXPECT_GT(r.lfu_decay, r.lru + 0.05);
    EXPECT_GT(r.lfu_decay, r.lfu_plain - 0.05);
    EXPECT_GT(r.lru, 0.2);
}

// The same law, but the hot set moves every 500 steps: plain LFU keeps the old favourites (their
// counts are too high to beat) and collapses; decayed counts follow the new set.
TEST(PolicyTraces, ShiftingHotSetNeedsDecay) {
    const Trace trace = routing_trace(64, 8, 4000, 1.0, 500, 11);
    const Rates r = measure(trace, 64, 16, "zipf s=1 shifting every 500 steps");
    EXPECT_GT(r.lfu_decay, r.lfu_plain + 0.05);
    EXPECT_GT(r.lfu_decay, r.lru);
}

}  // namespace
}  // namespace strata
