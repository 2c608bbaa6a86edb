// The draft length: fed the costs and acceptance of a setting, it settles on the k that maximizes
// expected tokens per second by the formula (computed again here), and on k = 0 where drafting
// cannot pay, while still probing.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/draft_length.h"
#include "runtime/drafter.h"

namespace strata {
namespace {

// Feeds `steps` steps of a setting where a pass of n tokens takes cost(n) seconds and each draft
// is accepted with probability alpha (as the fraction of a fixed pattern, so it is deterministic).
template <typename Cost>
int64_t settle(DraftLength& length, double alpha, Cost cost, int steps) {
    int64_t k = 0;
    int64_t tests = 0, passes = 0;
    for (int s = 0; s < steps; ++s) {
        k = length.choose();
        int64_t accepted = 0;
        while (accepted < k) {
            // The tests-th acceptance test passes when the running pass fraction stays ≤ alpha.
            const bool pass = static_cast<double>(passes + 1) <= alpha * static_cast<double>(tests + 1);
            ++tests;
            if (!pass) break;
            ++passes;
            ++accepted;
        }
        length.record(k, accepted, cost(k + 1));
    }
    return length.best();
}

TEST(DraftLength, DraftsTheMostWhereExtraTokensAreFreeAndAccepted) {
    DraftLength length({.k_max = 4});
    EXPECT_EQ(settle(length, 0.9, [](int64_t) { return 0.01; }, 200), 4);
    EXPECT_NEAR(length.acceptance(), 0.9, 0.05);
}

TEST(DraftLength, StaysOffWhereNothingIsAccepted) {
    DraftLength length({.k_max = 4, .probe_every = 8});
    EXPECT_EQ(settle(length, 0.0, [](int64_t n) { return 0.01 * static_cast<double>(n); }, 200), 0);
    // Still probing: one step in eight drafts one token.
    int drafted = 0;
    for (int s = 0; s < 64; ++s) {
        const int64_t k = length.choose();
        drafted += k > 0;
        length.record(k, 0, 0.01 * static_cast<double>(k + 1));
    }
    EXPECT_EQ(drafted, 8);
}

TEST(DraftLength, PicksTheBestKOfTheFormula) {
    // Each extra token costs 20% of a step; at alpha = 0.6 the rate E(k) / (1 + 0.2 k) peaks at k = 2.
    const double alpha = 0.6;
    const auto cost = [](int64_t n) { return 0.01 * (1.0 + 0.2 * static_cast<double>(n - 1)); };
    DraftLength length({.k_max = 6});
    const int64_t got = settle(length, alpha, cost, 2000);
    int64_t want = 0;
    double best = 1.0 / cost(1);
    for (int64_t k = 1; k <= 6; ++k) {
        const double e = (1.0 - std::pow(alpha, static_cast<double>(k + 1))) / (1.0 - alpha);
        if (e / cost(k + 1) > best) best = e / cost(k + 1), want = k;
    }
    ASSERT_GT(want, 0);
    ASSERT_LT(want, 6);
    EXPECT_EQ(got, want);
}

TEST(DraftLength, FixedWhenNotAdaptive) {
    DraftLength length({.k_max = 3, .adaptive = false});
    EXPECT_EQ(settle(length, 0.0, [](int64_t n) { return static_cast<double>(n); }, 50), 3);
}

TEST(PromptLookup, ProposesWhatFollowedTheLatestLongestMatch) {
    PromptLookupDrafter lookup({.ngram_min = 2, .ngram_max = 3});
    std::vector<int32_t> out;
    // "1 2 3 9 ... 1 2 3 7 8 ... 1 2 3": the 3-gram's latest earlier occurrence is followed by 7 8.
    const std::vector<int32_t> context = {1, 2, 3, 9, 5, 1, 2, 3, 7, 8, 6, 1, 2, 3};
    lookup.draft(context, 4, out);
    EXPECT_EQ(out, (std::vector<int32_t>{7, 8, 6, 1}));
    lookup.draft(context, 1, out);
    EXPECT_EQ(out, (std::vector<int32_t>{7}));
    // Only a 2-gram recurs: "4 5" followed by 6.
    lookup.draft(std::vector<int32_t>{4, 5, 6, 0, 4, 5}, 3, out);
    EXPECT_EQ(out, (std::vector<int32_t>{6, 0, 4}));
    // No suffix recurs, or nothing may be proposed.
    lookup.draft(std::vector<int32_t>{1, 2, 3, 4, 5}, 3, out);
    EXPECT_TRUE(out.empty());
    lookup.draft(context, 0, out);
    EXPECT_TRUE(out.empty());
    lookup.draft(std::vector<int32_t>{}, 3, out);
    EXPECT_TRUE(out.empty());
}

TEST(PromptLookup, RefusesBadSizes) {
    EXPECT_FALSE(PromptLookupOptions({.ngram_min = 0, .ngram_max = 2}).validate());
    EXPECT_FALSE(PromptLookupOptions({.ngram_min = 3, .ngram_max = 2}).validate());
    EXPECT_TRUE(PromptLookupOptions({.ngram_min = 1, .ngram_max = 4}).validate());
}

}  // namespace
}  // namespace strata
